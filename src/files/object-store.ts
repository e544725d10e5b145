import type { Readable } from 'node:stream';
import type { ObjectStorageKind } from './file-storage.ts';

/** One object as a listing sees it. */
export interface ListedObject {
  key: string;
  modifiedAt: Date;
}

/**
 * The port of a store of private objects (a folder, an S3 bucket). Every failure of the store itself
 * (unreachable, refusing, full) rejects with {@link ObjectStoreUnavailable}.
 */
export interface ObjectStore {
  readonly kind: ObjectStorageKind;
  /**
   * Writes `body` to `key` as it arrives and resolves once the object is durable. Rejects with
   * ObjectStoreUnavailable on any failure, the body's own included (the caller knows its body failed);
   * a failed put leaves no object, or one the caller's ledger entry deletes.
   */
  put(key: string, body: Readable, contentType: string): Promise<void>;
  /** The object's bytes, or undefined when there is no such object. */
  open(key: string): Promise<Readable | undefined>;
  /** Deletes the object; deleting a missing object succeeds (several processes may sweep the same key). */
  delete(key: string): Promise<void>;
  /** Every object under `files/`, a page at a time. */
  list(): AsyncIterable<ListedObject[]>;
  close(): void;
}

/** The store cannot be used right now; the request may be retried later. */
export class ObjectStoreUnavailable extends Error {
  constructor(store: ObjectStorageKind, cause: unknown) {
    super(`the ${store} file store is unavailable: ${(cause as Error | undefined)?.message ?? String(cause)}`, { cause });
    this.name = 'ObjectStoreUnavailable';
  }
}
