import { hashToken, sameHash } from '../api-keys/api-key.ts';
import { newKey, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';

const SETTING = 'admin_token_hash';

/** Holds the hash of the admin token; the token itself is never stored (contract, Admin API). */
export class AdminTokenService {
  private constructor(private readonly hash: string) {}

  /**
   * Uses FLAGPOST_ADMIN_TOKEN when set. Otherwise the first instance to start creates a token, keeps
   * its hash and returns the token once (`created`) for the caller to print; later starts reuse it.
   */
  static async open(db: Db, configured: string | undefined): Promise<{ service: AdminTokenService; created?: string }> {
    if (configured) return { service: new AdminTokenService(hashToken(configured)) };
    const existing = await db.selectFrom('settings').select('value').where('key', '=', SETTING).executeTakeFirst();
    if (existing) return { service: new AdminTokenService(existing.value) };
    const token = `fpa_${newKey(24)}`;
    await db
      .insertInto('settings')
      .values({ key: SETTING, value: hashToken(token), created_at: nowIso() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    // Another instance may have won the race; the stored hash is the one that counts.
    const stored = await db.selectFrom('settings').select('value').where('key', '=', SETTING).executeTakeFirstOrThrow();
    const created = stored.value === hashToken(token) ? token : undefined;
    return { service: new AdminTokenService(stored.value), created };
  }

  verify(token: string): boolean {
    return sameHash(this.hash, hashToken(token));
  }
}
