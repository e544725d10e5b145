import { randomBytes } from 'node:crypto';
import { nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import type { SettingsStore } from './settings.store.ts';

/**
 * A random key of this deployment kept under `name` in the settings, created by the first instance
 * that needs it; every instance of the deployment reads the same one.
 */
export async function instanceSecret(db: Db, store: SettingsStore, name: string): Promise<Buffer> {
  const existing = await store.find(db, name);
  const value = existing ?? (await store.insertIfAbsent(db, name, randomBytes(32).toString('base64'), nowIso()));
  return Buffer.from(value, 'base64');
}
