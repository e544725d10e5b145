import { isHttpUrl } from '../forms/index.ts';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Headers of the built-in pages: no script, no framing, no sniffing. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * The small built-in result page (contract D14) for forms without their own success or error URL.
 * The message comes from the query string, so it is escaped and shortened; the back link must be http(s).
 */
export function resultPage(kind: 'success' | 'error', text: string | undefined, goBackUrl: string | undefined): string {
  const title = kind === 'success' ? 'Thank you' : 'Something went wrong';
  const fallback = kind === 'success' ? 'Your form has been submitted successfully!' : 'Your submission could not be accepted.';
  const shown = escapeHtml((text || fallback).slice(0, 300));
  const back = goBackUrl && isHttpUrl(goBackUrl) ? `<p><a href="${escapeHtml(goBackUrl)}">Go back</a></p>` : '';
  const color = kind === 'success' ? '#1a7f37' : '#cf222e';
  // In the dark theme of the visitor's system, dark too (the dashboard's background), each colour 4.5:1 or more.
  const dark = kind === 'success' ? '#3fb950' : '#ff7b72';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2328}h1{color:${color};font-size:1.5rem}@media (prefers-color-scheme:dark){html{background:#0f1419}body{color:#e6edf3}h1{color:${dark}}a{color:#8ab4f8}}</style></head>
<body><main><h1>${title}</h1><p id="message">${shown}</p>${back}</main></body>
</html>
`;
}
