import type { FieldProblem } from '../errors.ts';

// TipTap, ProseMirror and happy-dom take about half a second to load, about as much as the rest of the
// server together, and only preview flags need them. So they are loaded on first use: the first write
// of preview content or the first GET /flags/preview of an environment with preview flags.

type Renderer = typeof import('./preview-renderer.ts');
let renderer: Promise<Renderer> | undefined;

/** The preview renderer, loaded once. */
export function loadPreviewRenderer(): Promise<Renderer> {
  renderer ??= import('./preview-renderer.ts');
  return renderer;
}

/** See preview-renderer.ts: the problems of a document, empty when it is accepted. */
export async function checkPreviewContent(doc: unknown, field?: string): Promise<FieldProblem[]> {
  return (await loadPreviewRenderer()).checkPreviewContent(doc, field);
}
