import { useEffect, useRef } from 'react';

// An e-mail's HTML part shown in a sandboxed iframe (no scripts, no forms, no navigation). The dashboard's
// Content-Security-Policy allows no inline style, and an iframe without its own address inherits that
// policy: the e-mail's style attributes and <style> elements would be refused (and reported on the
// console). So the HTML is parsed inertly, its styles are taken off and applied again through the CSSOM
// (element.style and constructed style sheets), which the policy does not govern; scripts, links and
// remote images (an e-mail client would not load them unasked either) are dropped.

export function MailFrame({ html, title }: { html: string; title: string }) {
  const ref = useRef<HTMLIFrameElement>(null);
  useEffect(() => {
    const doc = ref.current?.contentDocument;
    const view = doc?.defaultView;
    if (!doc || !view) return;
    const parsed = new DOMParser().parseFromString(html, 'text/html');
    parsed.querySelectorAll('script, link, meta, base, iframe, object, embed, form').forEach((el) => el.remove());
    const sheets = [...parsed.querySelectorAll('style')].map((el) => {
      el.remove();
      return el.textContent ?? '';
    });
    parsed.querySelectorAll('img').forEach((img) => {
      if (!/^data:/i.test(img.getAttribute('src') ?? '')) img.removeAttribute('src');
      img.removeAttribute('srcset');
    });
    const bodyStyle = parsed.body.getAttribute('style') ?? '';
    parsed.body.removeAttribute('style');
    const styled: Array<[number, string]> = [];
    parsed.body.querySelectorAll('*').forEach((el, i) => {
      const style = el.getAttribute('style');
      if (style !== null) styled.push([i, style]);
      el.removeAttribute('style');
      // Event handler attributes never run in the sandbox; dropped so that nothing looks executable.
      for (const name of el.getAttributeNames()) if (/^on/i.test(name)) el.removeAttribute(name);
    });
    const body = doc.importNode(parsed.body, true);
    doc.documentElement.replaceChild(body, doc.body);
    // An e-mail is drawn on the reader's light canvas, whatever the dashboard's theme.
    doc.documentElement.style.cssText = 'color-scheme: light; background: Canvas; color: CanvasText';
    body.style.cssText = bodyStyle;
    const all = body.querySelectorAll<HTMLElement>('*');
    for (const [i, style] of styled) if (all[i]) all[i].style.cssText = style;
    const constructed = sheets.map((text) => {
      const sheet = new view.CSSStyleSheet();
      sheet.replaceSync(text);
      return sheet;
    });
    doc.adoptedStyleSheets = constructed;
  }, [html]);
  return <iframe ref={ref} className="mail-frame" title={title} sandbox="allow-same-origin" />;
}
