import { newKey, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import type { SettingsStore } from '../admin/index.ts';
import { hashToken, sameHash } from './token-hash.ts';

const SETTING = 'admin_token_hash';

/** Holds the hash of the admin token; the token itself is never stored (contract, Admin API). */
export class AdminTokenService {
  /**
   * Names the current token without revealing its hash: sessions opened with the admin token record it,
   * and a session of another generation is over (issue 20: rotating the token ends its sessions).
   */
  readonly generation: string;

  private constructor(private readonly hash: string) {
    this.generation = hashToken(`generation:${hash}`).slice(0, 24);
  }

  /**
   * Uses FLAGPOST_ADMIN_TOKEN when set. Otherwise the first instance to start creates a token, keeps
   * its hash and returns the token once (`created`) for the caller to print; later starts reuse it.
   */
  static async open(db: Db, store: SettingsStore, configured: string | undefined): Promise<{ service: AdminTokenService; created?: string }> {
    if (configured) return { service: new AdminTokenService(hashToken(configured)) };
    const existing = await store.find(db, SETTING);
    if (existing) return { service: new AdminTokenService(existing) };
    const token = `fpa_${newKey(24)}`;
    // Another instance may have won the race; the stored hash is the one that counts.
    const stored = await store.insertIfAbsent(db, SETTING, hashToken(token), nowIso());
    const created = stored === hashToken(token) ? token : undefined;
    return { service: new AdminTokenService(stored), created };
  }

  /**
   * Replaces the stored admin token with a new one and returns it (the operator command
   * `flagpost reset-admin-token`, which also ends the sessions the old one opened and audits the reset).
   * Running servers keep the token they read at start until restarted.
   */
  static async reset(db: Executor, store: SettingsStore): Promise<string> {
    const token = `fpa_${newKey(24)}`;
    await store.put(db, SETTING, hashToken(token), nowIso());
    return token;
  }

  verify(token: string): boolean {
    return sameHash(this.hash, hashToken(token));
  }
}
