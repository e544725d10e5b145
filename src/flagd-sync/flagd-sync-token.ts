import { createHash } from 'node:crypto';

/** What an admin may see of an environment's sync token: never the token itself after its creation. */
export interface SyncTokenInfo {
  environmentId: string;
  /** The first characters, to tell tokens apart in configuration. */
  tokenPrefix: string;
  createdAt: string;
}

/** The environment a valid token gives access to. */
export interface SyncGrant {
  environmentId: string;
  projectKey: string;
  environmentKey: string;
  tokenHash: string;
}

export const SYNC_TOKEN_PREFIX = 'fps_';
/** Characters of the token kept visible (prefix plus four). */
export const VISIBLE_PREFIX_LENGTH = SYNC_TOKEN_PREFIX.length + 4;
/** A selector longer than this is refused without hashing it. */
export const MAX_SELECTOR_LENGTH = 200;
/** The selector may name the scheme (`flagpost:<token>`) or be the bare token. */
const SCHEME = 'flagpost:';

export function hashSyncToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The token a provider's selector carries, or undefined when it carries none. */
export function tokenOfSelector(selector: string): string | undefined {
  if (selector.length === 0 || selector.length > MAX_SELECTOR_LENGTH) return undefined;
  const token = selector.startsWith(SCHEME) ? selector.slice(SCHEME.length) : selector;
  return token.startsWith(SYNC_TOKEN_PREFIX) && /^[A-Za-z0-9_-]+$/.test(token) ? token : undefined;
}

export const syncTokenView = (t: SyncTokenInfo | undefined) =>
  t ? { configured: true, prefix: t.tokenPrefix, createdAt: t.createdAt } : { configured: false, prefix: null, createdAt: null };
