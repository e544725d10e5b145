import type { Executor } from '../db/database.ts';

/** Instance-wide settings (the `settings` table): small values under fixed keys. */
export class SettingsStore {
  async find(db: Executor, key: string): Promise<string | undefined> {
    const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /** Stores `value` unless the key is taken (another instance may have been first), then returns the stored value. */
  async insertIfAbsent(db: Executor, key: string, value: string, createdAt: string): Promise<string> {
    await db
      .insertInto('settings')
      .values({ key, value, created_at: createdAt })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const stored = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return stored.value;
  }

  /** Stores `value` under `key`, replacing what was there. */
  async put(db: Executor, key: string, value: string, createdAt: string): Promise<void> {
    await db
      .insertInto('settings')
      .values({ key, value, created_at: createdAt })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, created_at: createdAt }))
      .execute();
  }
}
