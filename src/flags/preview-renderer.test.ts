import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkPreviewContent, renderPreviewContent } from './preview-renderer.ts';

const para = (...content: unknown[]) => ({ type: 'doc', content: [{ type: 'paragraph', content }] });
const text = (value: string, marks?: unknown[]) => ({ type: 'text', text: value, ...(marks ? { marks } : {}) });

describe('preview renderer (contract D9)', () => {
  const rendered: Array<[string, unknown, string]> = [
    ['escapes text', para(text('<img src=x onerror=alert(1)> & "q"')), '<p>&lt;img src=x onerror=alert(1)&gt; &amp; "q"</p>'],
    ['renders marks', para(text('b', [{ type: 'bold' }]), text('i', [{ type: 'italic' }])), '<p><strong>b</strong><em>i</em></p>'],
    [
      'renders headings and lists',
      {
        type: 'doc',
        content: [
          { type: 'heading', attrs: { level: 2 }, content: [text('H')] },
          { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [text('x')] }] }] },
        ],
      },
      '<h2>H</h2><ul><li><p>x</p></li></ul>',
    ],
    [
      'escapes link targets',
      para(text('l', [{ type: 'link', attrs: { href: 'https://a.example/?a=1&b="x"' } }])),
      '<p><a target="_blank" rel="noopener noreferrer nofollow" href="https://a.example/?a=1&amp;b=&quot;x&quot;">l</a></p>',
    ],
    ['drops unknown attributes', { type: 'doc', content: [{ type: 'paragraph', attrs: { onclick: 'x', class: 'y' }, content: [text('p')] }] }, '<p>p</p>'],
    ['renders an empty editor document', { type: 'doc', content: [{ type: 'paragraph' }] }, '<p></p>'],
  ];
  for (const [name, doc, html] of rendered) {
    it(name, () => {
      assert.deepEqual(checkPreviewContent(doc), []);
      assert.equal(renderPreviewContent(doc), html);
    });
  }

  const refused: Array<[string, unknown, RegExp]> = [
    ['a non-object', 'text', /document object/],
    ['a root that is no doc', { type: 'paragraph' }, /root node/],
    ['an unknown node', { type: 'doc', content: [{ type: 'iframe' }] }, /unknown node type "iframe"/],
    ['an unknown mark', para(text('x', [{ type: 'script' }])), /unknown mark type "script"/],
    ['a javascript: link', para(text('x', [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }])), /http, https or mailto/],
    ['a data: link', para(text('x', [{ type: 'link', attrs: { href: 'data:text/html,x' } }])), /http, https or mailto/],
    ['a relative link', para(text('x', [{ type: 'link', attrs: { href: '/x' } }])), /http, https or mailto/],
    ['a link with a class', para(text('x', [{ type: 'link', attrs: { href: 'https://a.example', class: 'button primary' } }])), /a link with a class/],
    [
      'a link opening in the same tab',
      para(text('x', [{ type: 'link', attrs: { href: 'https://a.example', target: '_self' } }])),
      /target attribute is not _blank/,
    ],
    ['a link to a named frame', para(text('x', [{ type: 'link', attrs: { href: 'https://a.example', target: 'app' } }])), /target attribute is not _blank/],
    ['a link that keeps the opener', para(text('x', [{ type: 'link', attrs: { href: 'https://a.example', rel: 'opener' } }])), /noopener and noreferrer/],
    ['a link that sends the referrer', para(text('x', [{ type: 'link', attrs: { href: 'https://a.example', rel: 'noopener' } }])), /noopener and noreferrer/],
    ['text directly in the doc', { type: 'doc', content: [text('x')] }, /not a valid document/],
    ['content that is no list', { type: 'doc', content: 'x' }, /not a list/],
  ];
  for (const [name, doc, reason] of refused) {
    it(`refuses ${name}`, () => {
      const problems = checkPreviewContent(doc);
      assert.ok(problems.length > 0);
      assert.match(problems.map((p) => p.reason).join('; '), reason);
    });
  }

  it('refuses a document nested too deeply', () => {
    let node: Record<string, unknown> = text('x');
    for (let i = 0; i < 100; i++) node = { type: 'blockquote', content: [node] };
    assert.match(checkPreviewContent({ type: 'doc', content: [node] })[0]!.reason, /nested deeper/);
  });

  it('renders every link with target _blank, rel noopener noreferrer nofollow and no class, whatever was stored before the check', () => {
    const stored = para(
      text('a', [{ type: 'link', attrs: { href: 'https://a.example', target: '_self', rel: 'opener', class: 'button' } }]),
      text('b', [{ type: 'link', attrs: { href: 'https://b.example', target: null, rel: null, class: null } }]),
    );
    assert.equal(
      renderPreviewContent(stored),
      '<p><a target="_blank" rel="noopener noreferrer nofollow" href="https://a.example">a</a>' +
        '<a target="_blank" rel="noopener noreferrer nofollow" href="https://b.example">b</a></p>',
    );
    assert.deepEqual(
      checkPreviewContent(
        para(text('c', [{ type: 'link', attrs: { href: 'https://c.example', target: '_blank', rel: 'noreferrer noopener ugc', class: null } }])),
      ),
      [],
    );
  });
});
