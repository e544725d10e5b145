import { getSchema } from '@tiptap/core';
import { DOMSerializer, Node as PMNode } from '@tiptap/pm/model';
import StarterKit from '@tiptap/starter-kit';
import { Window } from 'happy-dom';
import type { FieldProblem } from '../errors.ts';

// Preview content is a TipTap/ProseMirror JSON document rendered to HTML (contract D9). @tiptap/html's
// generateHTML builds a schema and a DOM window on every call; we use the same TipTap primitives but
// build the schema, the serializer and one script-less happy-dom window once per process.
const schema = getSchema([StarterKit.configure({ link: { openOnClick: false } })]);
const serializer = DOMSerializer.fromSchema(schema);
const window = new Window({
  settings: {
    disableJavaScriptEvaluation: true,
    disableJavaScriptFileLoading: true,
    disableCSSFileLoading: true,
    disableIframePageLoading: true,
    disableComputedStyleRendering: true,
  },
});
const document = window.document as unknown as Document;

const ALLOWED_LINK_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
/**
 * Every rendered link opens in a new browsing context that gets no `window.opener` and no Referer, and
 * carries no class of the author's (which could dress it as the host page's own button): issue 20.
 */
const LINK_ATTRS = { target: '_blank', rel: 'noopener noreferrer nofollow', class: null } as const;
const MAX_DEPTH = 64;

type JsonNode = { type?: unknown; content?: unknown; marks?: unknown; attrs?: unknown; text?: unknown };

/**
 * Checks a document before it is stored: only node and mark types of the schema, link targets only
 * http, https or mailto, links without a class, opening in a new tab (`target` `_blank`) with `rel`
 * holding `noopener` and `noreferrer` when given. Returns the problems; an empty list means the
 * document is accepted.
 */
export function checkPreviewContent(doc: unknown, field = 'previewContent'): FieldProblem[] {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return [{ field, reason: 'must be a TipTap JSON document object' }];
  }
  if ((doc as JsonNode).type !== 'doc') return [{ field, reason: 'the root node must have type "doc"' }];
  const problems: FieldProblem[] = [];
  walk(doc as JsonNode, 0, field, problems);
  if (problems.length > 0) return problems;
  try {
    PMNode.fromJSON(schema, doc).check();
  } catch (error) {
    return [{ field, reason: `is not a valid document: ${(error as Error).message}` }];
  }
  return [];
}

function walk(node: JsonNode, depth: number, field: string, problems: FieldProblem[]): void {
  if (depth > MAX_DEPTH) {
    problems.push({ field, reason: `is nested deeper than ${MAX_DEPTH} levels` });
    return;
  }
  if (typeof node.type !== 'string' || !schema.nodes[node.type]) {
    problems.push({ field, reason: `has an unknown node type ${JSON.stringify(node.type)}` });
    return;
  }
  if (node.marks !== undefined) {
    if (!Array.isArray(node.marks)) {
      problems.push({ field, reason: 'has marks that are not a list' });
      return;
    }
    for (const mark of node.marks as JsonNode[]) {
      if (typeof mark?.type !== 'string' || !schema.marks[mark.type]) {
        problems.push({ field, reason: `has an unknown mark type ${JSON.stringify(mark?.type)}` });
      } else if (mark.type === 'link') {
        const attrs = (mark.attrs ?? {}) as { href?: unknown; target?: unknown; rel?: unknown; class?: unknown };
        if (!isAllowedHref(attrs.href)) problems.push({ field, reason: 'has a link whose target is not http, https or mailto' });
        if (attrs.class != null) problems.push({ field, reason: 'has a link with a class' });
        if (attrs.target != null && attrs.target !== LINK_ATTRS.target) problems.push({ field, reason: 'has a link whose target attribute is not _blank' });
        const rel = typeof attrs.rel === 'string' ? attrs.rel.split(/\s+/) : [];
        if (attrs.rel != null && !(rel.includes('noopener') && rel.includes('noreferrer'))) {
          problems.push({ field, reason: 'has a link whose rel does not hold noopener and noreferrer' });
        }
      }
    }
  }
  if (node.content !== undefined) {
    if (!Array.isArray(node.content)) {
      problems.push({ field, reason: 'has content that is not a list' });
      return;
    }
    for (const child of node.content as JsonNode[]) {
      if (child === null || typeof child !== 'object') {
        problems.push({ field, reason: 'has a child that is not a node object' });
        continue;
      }
      walk(child, depth + 1, field, problems);
    }
  }
}

function isAllowedHref(href: unknown): boolean {
  if (typeof href !== 'string') return false;
  try {
    return ALLOWED_LINK_PROTOCOLS.has(new URL(href).protocol);
  } catch {
    return false;
  }
}

/** The document with every link's target, rel and class set to LINK_ATTRS (also for documents stored before the check). */
function withSafeLinks(node: JsonNode): JsonNode {
  const marks = Array.isArray(node.marks)
    ? (node.marks as JsonNode[]).map((mark) => (mark?.type === 'link' ? { ...mark, attrs: { ...(mark.attrs as object), ...LINK_ATTRS } } : mark))
    : node.marks;
  const content = Array.isArray(node.content) ? (node.content as JsonNode[]).map(withSafeLinks) : node.content;
  return { ...node, ...(marks === undefined ? {} : { marks }), ...(content === undefined ? {} : { content }) };
}

/** Renders an accepted document to HTML; text is escaped by the DOM serializer. */
export function renderPreviewContent(doc: unknown): string {
  if (doc === null || doc === undefined) return '';
  const node = PMNode.fromJSON(schema, withSafeLinks(doc as JsonNode));
  const wrap = document.createElement('div');
  serializer.serializeFragment(node.content, { document }, wrap);
  return wrap.innerHTML;
}
