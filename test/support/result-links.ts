import assert from 'node:assert/strict';
import { ResultLinks } from '../../src/submissions/submission-answer.ts';
import type { TestContext } from './context.ts';

/** A link to a built-in result page without its `sig` (which must be there), to compare with contract D14's form. */
export function unsignedUrl(url: unknown): string {
  const text = String(url);
  const match = /&sig=[\w-]{22}$/.exec(text);
  assert.ok(match, `${text} is signed`);
  return text.slice(0, match.index);
}

/** A form answer whose `url` is a built-in page, with that url unsigned. */
export function unsigned<T extends { url?: unknown }>(body: T): T {
  return { ...body, url: unsignedUrl(body.url) };
}

/** A built-in page path signed as Flagpost signs it, for tests of what the page shows. */
export function signedPage(ctx: TestContext, path: string, message: string, goBackUrl?: string): string {
  const links = new ResultLinks('http://x', ctx.services.resultPageKey);
  const url = new URL(links.error({ rest: true, form: undefined, goBackUrl }, message));
  return `${path}${url.search}`;
}
