import { useEffect, useRef } from 'react';

// An e-mail's HTML part shown in a sandboxed iframe (no scripts, no forms, no navigation). The dashboard's
// Content-Security-Policy allows no inline style, and an iframe without its own address inherits that
// policy: the e-mail's style attributes and <style> elements would be refused and reported on the console
// (in Chromium even while DOMParser parses them, and when set again through element.style). So they are
// taken out of the HTML text before it is parsed: each style attribute becomes a rule of a constructed
// style sheet (adoptedStyleSheets, which the policy does not govern) for a data attribute put in its place,
// each <style> element a constructed sheet of its own. Scripts, links and remote images (an e-mail client
// would not load them unasked either) are dropped.

const MARK = 'data-flagpost-style';
const STYLE_ELEMENT = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;
// A style attribute inside a start tag (field values come escaped: no `<` starts a tag inside a value).
const STYLE_ATTRIBUTE = /(<[a-zA-Z][^>]*?\s)style\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const ENTITIES: Record<string, string> = { '&quot;': '"', '&#39;': "'", '&#x27;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' };

/** The HTML without style elements and attributes, and the CSS that puts them back (a sheet each). */
export function splitStyles(html: string): { html: string; sheets: string[] } {
  const sheets: string[] = [];
  let rest = html.replace(STYLE_ELEMENT, (_, css: string) => {
    sheets.push(css);
    return '';
  });
  const rules: string[] = [];
  let previous;
  // A tag with several style attributes (invalid, but possible) needs a pass for each.
  do {
    previous = rest;
    rest = rest.replace(STYLE_ATTRIBUTE, (_, start: string, double: string | undefined, single: string | undefined) => {
      const css = (double ?? single ?? '').replace(/&(quot|#39|#x27|lt|gt|amp);/g, (e) => ENTITIES[e] ?? e);
      rules.push(`[${MARK}="${rules.length}"] { ${css} }`);
      return `${start}${MARK}="${rules.length - 1}"`;
    });
  } while (rest !== previous);
  // The attributes' rules come last: as inline styles do, they win over the e-mail's own sheets.
  return { html: rest, sheets: [...sheets, rules.join('\n')] };
}

export function MailFrame({ html, title }: { html: string; title: string }) {
  const ref = useRef<HTMLIFrameElement>(null);
  useEffect(() => {
    const doc = ref.current?.contentDocument;
    const view = doc?.defaultView;
    if (!doc || !view) return;
    const { html: plain, sheets } = splitStyles(html);
    const parsed = new DOMParser().parseFromString(plain, 'text/html');
    parsed.querySelectorAll('script, link, meta, base, iframe, object, embed, form').forEach((el) => el.remove());
    parsed.querySelectorAll('img').forEach((img) => {
      if (!/^data:/i.test(img.getAttribute('src') ?? '')) img.removeAttribute('src');
      img.removeAttribute('srcset');
    });
    // Event handler attributes never run in the sandbox; dropped so that nothing looks executable.
    parsed.querySelectorAll('*').forEach((el) => {
      for (const name of el.getAttributeNames()) if (/^on/i.test(name)) el.removeAttribute(name);
    });
    doc.documentElement.replaceChild(doc.importNode(parsed.body, true), doc.body);
    // An e-mail is drawn on the reader's light canvas, whatever the dashboard's theme.
    doc.adoptedStyleSheets = ['html { color-scheme: light; background: Canvas; color: CanvasText }', ...sheets].map((text) => {
      const sheet = new view.CSSStyleSheet();
      sheet.replaceSync(text);
      return sheet;
    });
  }, [html]);
  return <iframe ref={ref} className="mail-frame" title={title} sandbox="allow-same-origin" />;
}
