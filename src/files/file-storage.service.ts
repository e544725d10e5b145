import { Readable } from 'node:stream';
import { nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, messages } from '../errors.ts';
import type { FileObjectStore } from './file-object.store.ts';
import {
  type FileLocation,
  type FileStorageKind,
  type ObjectLocation,
  type ObjectStorageKind,
  objectKeyOf,
  objectOf,
  type ReceivedFile,
} from './file-storage.ts';
import { type ObjectStore, ObjectStoreUnavailable } from './object-store.ts';

export interface FileStorageLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface FileStorageDeps {
  db: Db;
  store: FileObjectStore;
  /** Where new files go (FLAGPOST_FILE_STORAGE). */
  kind: FileStorageKind;
  /** Every object store this process can reach: the configured one, and others that older files may still be in. */
  objects: Partial<Record<ObjectStorageKind, ObjectStore>>;
  clock: () => Date;
  log: FileStorageLog;
  /** An upload record older than this is abandoned (its process died): the longest an upload and its commit may take, in ms. */
  abandonAfterMs: number;
}

/** Seconds a client is asked to wait when the file store is away. */
export const FILE_STORE_RETRY_AFTER_SECONDS = 30;
/** A sweep's hold on a deletion: after this long, another sweep may take it over (its process died), in ms. */
const CLAIM_LEASE_MS = 5 * 60_000;
/** Deletions one sweep takes at a time. */
const SWEEP_BATCH = 200;

/** What one sweep did. */
export interface SweepRound {
  /** Objects deleted that the ledger listed (deleted files, abandoned uploads). */
  deleted: number;
  /** Objects deleted that nothing referenced and the ledger did not list. */
  orphans: number;
}

/** Which of these object keys committed file rows point at (the submissions capability answers). */
export type ReferencedKeys = (keys: readonly string[]) => Promise<Set<string>>;

const unavailable = () => new AppError('unavailable', messages.formFileStoreUnavailable, { retryAfterSeconds: FILE_STORE_RETRY_AFTER_SECONDS });

/**
 * Uploaded files in the database, a folder or an S3 bucket (docs/adr/0030-file-storage.md). Objects
 * are written before their file rows commit and deleted after their file rows are deleted; the
 * `file_objects` ledger covers the gap both ways, so a crash, an outage or a kill -9 leaves either a
 * committed file with its object, or a ledger entry that the sweep turns into no object at all.
 */
export class FileStorage {
  constructor(private readonly deps: FileStorageDeps) {}

  /** Where new files go. */
  get kind(): FileStorageKind {
    return this.deps.kind;
  }

  /**
   * Reads `source` to its end into the configured storage, as it arrives: a database file is kept in
   * memory for its row, an object is written through to its store (memory: one part at most). An
   * error of `source` (a limit) is rethrown as is and leaves nothing; a store failure is a 503.
   */
  async receive(fileId: string, source: AsyncIterable<Buffer>, contentType: string): Promise<ReceivedFile> {
    let size = 0;
    let sourceFailed: { error: unknown } | undefined;
    const counted = (async function* () {
      try {
        for await (const chunk of source) {
          size += chunk.length;
          yield chunk;
        }
      } catch (error) {
        sourceFailed = { error };
        throw error;
      }
    })();
    if (this.deps.kind === 'db') {
      const chunks: Buffer[] = [];
      for await (const chunk of counted) chunks.push(chunk);
      return { size, location: { storage: 'db', content: Buffer.concat(chunks) } };
    }
    const object: ObjectLocation = { storage: this.deps.kind, key: objectKeyOf(fileId) };
    const store = this.storeOf(object.storage);
    await this.deps.store.insertUploading(this.deps.db, object, nowIso(this.deps.clock));
    try {
      await store.put(object.key, Readable.from(counted, { objectMode: false }), contentType);
    } catch (error) {
      await this.discard([{ size, location: object }]);
      // A limit of the body, or the client gone: not the store's fault.
      if (sourceFailed) throw sourceFailed.error;
      if (error instanceof ObjectStoreUnavailable) {
        this.deps.log.warn({ err: error }, 'file store unavailable: upload refused');
        throw unavailable();
      }
      throw error;
    }
    return { size, location: object };
  }

  /**
   * In the transaction that commits the file rows of `files`: their objects are now vouched for. A
   * file whose upload was meanwhile abandoned by a sweep (its object is being deleted) fails the
   * transaction, so no committed row points at a deleted object.
   */
  async commit(trx: Executor, files: readonly ReceivedFile[]): Promise<void> {
    const keys = files.map(objectOf).flatMap((o) => (o ? [o.key] : []));
    if (keys.length === 0) return;
    if ((await this.deps.store.commitUploads(trx, keys)) !== keys.length) throw unavailable();
  }

  /**
   * Gives up files that were received but will not be committed (a refused or failed submission):
   * their objects are deleted now, or by the sweep when the store or the database is away.
   */
  async discard(files: readonly ReceivedFile[]): Promise<void> {
    const objects = files.map(objectOf).filter((o): o is ObjectLocation => o !== undefined);
    if (objects.length === 0) return;
    try {
      const abandoned = new Set(
        await this.deps.store.abandonUploads(
          this.deps.db,
          objects.map((o) => o.key),
          nowIso(this.deps.clock),
        ),
      );
      await this.purge(objects.filter((o) => abandoned.has(o.key)));
    } catch (error) {
      this.deps.log.warn({ err: error }, 'uploaded files not discarded now; the sweep will delete them');
    }
  }

  /** In the transaction that deletes file rows: their objects are to be deleted (now by `purge`, or by the sweep). */
  async forget(trx: Executor, objects: readonly ObjectLocation[]): Promise<void> {
    if (objects.length > 0) await this.deps.store.insertDeleting(trx, objects, nowIso(this.deps.clock));
  }

  /** After the commit that forgot them: deletes these objects now; what fails is left to the sweep. */
  async purge(objects: readonly ObjectLocation[]): Promise<number> {
    let deleted = 0;
    for (const object of objects) {
      const store = this.deps.objects[object.storage];
      if (!store) continue;
      try {
        await store.delete(object.key);
        await this.deps.store.removeDeleted(this.deps.db, object.key);
        deleted++;
      } catch (error) {
        this.deps.log.warn({ err: error, key: object.key }, 'object not deleted now; the sweep will retry');
        // The next sweep may take it at once, rather than after this one's lease.
        await this.deps.store.release(this.deps.db, object.key).catch(() => {});
        return deleted;
      }
    }
    return deleted;
  }

  /**
   * The bytes of a file: inline ones as they are, an object as a stream. A store that is away is a
   * 503; an object missing from its store is a server error (it must never happen).
   */
  async open(location: FileLocation): Promise<Buffer | Readable> {
    if (location.storage === 'db') return location.content;
    const store = this.deps.objects[location.storage];
    if (!store) throw new Error(`file store ${location.storage} is not configured, but a file is stored there`);
    let body: Readable | undefined;
    try {
      body = await store.open(location.key);
    } catch (error) {
      if (!(error instanceof ObjectStoreUnavailable)) throw error;
      this.deps.log.warn({ err: error }, 'file store unavailable: download refused');
      throw new AppError('unavailable', messages.fileStoreUnavailable, { retryAfterSeconds: FILE_STORE_RETRY_AFTER_SECONDS });
    }
    if (!body) throw new Error(`object ${location.key} is missing from the ${location.storage} file store`);
    return body;
  }

  /** Writes `content` to `object` for a migration; recorded as an upload first, like any other. */
  async write(object: ObjectLocation, content: Buffer, contentType: string): Promise<ReceivedFile> {
    await this.deps.store.insertUploading(this.deps.db, object, nowIso(this.deps.clock));
    try {
      await this.storeOf(object.storage).put(object.key, Readable.from([content]), contentType);
    } catch (error) {
      await this.discard([{ size: content.length, location: object }]);
      throw error;
    }
    return { size: content.length, location: object };
  }

  /** Reads an object whole (a migration moves files one at a time, each within the upload limit). */
  async read(object: ObjectLocation): Promise<Buffer> {
    const body = await this.open(object);
    if (Buffer.isBuffer(body)) return body;
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /**
   * Deletes what no committed file row vouches for: abandoned uploads (older than abandonAfterMs),
   * deletions not done yet, and objects of the stores that neither the ledger nor `referenced` knows
   * (older than abandonAfterMs). Safe in several processes at once: each deletion is claimed in the
   * database first, deleting a missing object succeeds, and an object is called unreferenced only
   * if the ledger did not list it before its references were read (the ledger row of an upload goes
   * in the transaction that writes its file row, so one of the two always shows a live object).
   */
  async sweep(referenced: ReferencedKeys): Promise<SweepRound> {
    const round: SweepRound = { deleted: 0, orphans: 0 };
    const { db, store } = this.deps;
    const now = this.deps.clock().getTime();
    const cutoff = new Date(now - this.deps.abandonAfterMs).toISOString();
    await store.expireUploads(db, cutoff);
    round.deleted = await this.purgeDue();
    for (const [, objectStore] of Object.entries(this.deps.objects)) {
      for await (const page of objectStore.list()) {
        const old = page.filter((o) => o.modifiedAt.getTime() < now - this.deps.abandonAfterMs).map((o) => o.key);
        if (old.length === 0) continue;
        const listed = await store.listed(db, old);
        const live = await referenced(old.filter((key) => !listed.has(key)));
        for (const key of old) {
          if (listed.has(key) || live.has(key)) continue;
          await objectStore.delete(key);
          round.orphans++;
        }
      }
    }
    return round;
  }

  /** Deletes the objects the ledger lists for deletion that no other sweep holds; answers how many went. */
  async purgeDue(): Promise<number> {
    const { db, store } = this.deps;
    const storages = Object.keys(this.deps.objects) as ObjectStorageKind[];
    let total = 0;
    for (;;) {
      const leaseCutoff = new Date(this.deps.clock().getTime() - CLAIM_LEASE_MS).toISOString();
      const due = await store.due(db, storages, leaseCutoff, SWEEP_BATCH);
      const mine: ObjectLocation[] = [];
      for (const object of due) if (await store.claim(db, object.key, leaseCutoff, nowIso(this.deps.clock))) mine.push(object);
      const deleted = await this.purge(mine);
      total += deleted;
      if (due.length < SWEEP_BATCH || deleted < mine.length) return total;
    }
  }

  /** Ledger rows per state (tests, operators). */
  ledger(): Promise<{ uploading: number; deleting: number }> {
    return this.deps.store.counts(this.deps.db);
  }

  close(): void {
    for (const store of Object.values(this.deps.objects)) store.close();
  }

  private storeOf(kind: ObjectStorageKind): ObjectStore {
    const store = this.deps.objects[kind];
    if (!store) throw new Error(`file store ${kind} is not configured`);
    return store;
  }
}
