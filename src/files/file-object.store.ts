import type { Executor } from '../db/database.ts';
import type { ObjectLocation, ObjectStorageKind } from './file-storage.ts';

/** Keys per statement, well below SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** The ledger of objects no committed file row vouches for (table file_objects, migration 0014). */
export class FileObjectStore {
  /** Records an upload about to start; committed on its own, before the first byte goes to the store. */
  async insertUploading(db: Executor, object: ObjectLocation, now: string): Promise<void> {
    await db
      .insertInto('file_objects')
      .values({ object_key: object.key, storage: object.storage, state: 'uploading', created_at: now, claimed_at: null })
      .execute();
  }

  /**
   * Removes the upload records of `keys` in the transaction that commits their file rows; answers how
   * many it removed (fewer than asked: a sweep gave some of them up as abandoned).
   */
  async commitUploads(db: Executor, keys: readonly string[]): Promise<number> {
    let removed = 0;
    for (const part of chunks(keys)) {
      const result = await db.deleteFrom('file_objects').where('object_key', 'in', part).where('state', '=', 'uploading').executeTakeFirst();
      removed += Number(result.numDeletedRows);
    }
    return removed;
  }

  /**
   * Turns the upload records of `keys` into deletions, only where they are still uploads: a key whose
   * file row was committed after all (a commit that failed late) has no record left and is not touched.
   * Answers the keys it turned.
   */
  async abandonUploads(db: Executor, keys: readonly string[], now: string): Promise<string[]> {
    const abandoned: string[] = [];
    for (const key of keys) {
      const result = await db
        .updateTable('file_objects')
        .set({ state: 'deleting', claimed_at: now })
        .where('object_key', '=', key)
        .where('state', '=', 'uploading')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) abandoned.push(key);
    }
    return abandoned;
  }

  /** Gives up every upload record older than `cutoff` (its process died or never finished). */
  async expireUploads(db: Executor, cutoff: string): Promise<number> {
    const result = await db
      .updateTable('file_objects')
      .set({ state: 'deleting' })
      .where('state', '=', 'uploading')
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Records objects to delete, in the transaction that deletes their file rows. */
  async insertDeleting(db: Executor, objects: readonly ObjectLocation[], now: string): Promise<void> {
    for (const part of chunks(objects)) {
      await db
        .insertInto('file_objects')
        .values(part.map((o) => ({ object_key: o.key, storage: o.storage, state: 'deleting', created_at: now, claimed_at: null })))
        .onConflict((oc) => oc.column('object_key').doUpdateSet({ state: 'deleting' }))
        .execute();
    }
  }

  /** Objects to delete that no sweep holds (never taken, or taken before `leaseCutoff`), oldest first. */
  async due(db: Executor, storages: readonly ObjectStorageKind[], leaseCutoff: string, limit: number): Promise<ObjectLocation[]> {
    if (storages.length === 0) return [];
    const rows = await db
      .selectFrom('file_objects')
      .select(['object_key', 'storage'])
      .where('state', '=', 'deleting')
      .where('storage', 'in', storages)
      .where((eb) => eb.or([eb('claimed_at', 'is', null), eb('claimed_at', '<', leaseCutoff)]))
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ storage: r.storage as ObjectStorageKind, key: r.object_key }));
  }

  /** Takes one deletion for this sweep; false when another process took it first. */
  async claim(db: Executor, key: string, leaseCutoff: string, now: string): Promise<boolean> {
    const result = await db
      .updateTable('file_objects')
      .set({ claimed_at: now })
      .where('object_key', '=', key)
      .where('state', '=', 'deleting')
      .where((eb) => eb.or([eb('claimed_at', 'is', null), eb('claimed_at', '<', leaseCutoff)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Lets go of a deletion this process could not do, so that the next sweep takes it. */
  async release(db: Executor, key: string): Promise<void> {
    await db.updateTable('file_objects').set({ claimed_at: null }).where('object_key', '=', key).where('state', '=', 'deleting').execute();
  }

  /** Forgets a deletion once its object is gone. */
  async removeDeleted(db: Executor, key: string): Promise<void> {
    await db.deleteFrom('file_objects').where('object_key', '=', key).where('state', '=', 'deleting').execute();
  }

  /** Which of `keys` the ledger lists, in any state. */
  async listed(db: Executor, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const part of chunks(keys)) {
      for (const row of await db.selectFrom('file_objects').select('object_key').where('object_key', 'in', part).execute()) found.add(row.object_key);
    }
    return found;
  }

  /** Ledger rows per state (for tests and operators). */
  async counts(db: Executor): Promise<{ uploading: number; deleting: number }> {
    const rows = await db
      .selectFrom('file_objects')
      .select((eb) => ['state', eb.fn.countAll<string | number>().as('n')])
      .groupBy('state')
      .execute();
    const count = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
    return { uploading: count('uploading'), deleting: count('deleting') };
  }
}
