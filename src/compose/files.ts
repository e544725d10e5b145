import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DbHandle } from '../db/connect.ts';
import { FileObjectStore, FileStorage, type FileStorageLog, FsObjectStore, type ObjectStore, S3ObjectStore } from '../files/index.ts';

/**
 * The file storage of FLAGPOST_FILE_STORAGE, able to read and delete objects of every store it can
 * reach: the folder always, the bucket whenever one is configured (files stay where they were written
 * until `migrate-files` moves them).
 */
export function openFileStorage(config: Config, handle: DbHandle, clock: Clock, log: FileStorageLog): FileStorage {
  const objects: { fs: ObjectStore; s3?: ObjectStore } = { fs: new FsObjectStore(config.dataDir) };
  if (config.files.s3) objects.s3 = new S3ObjectStore(config.files.s3);
  return new FileStorage({
    db: handle.db,
    store: new FileObjectStore(),
    kind: config.files.storage,
    objects,
    clock,
    log,
    // An upload holds its record at most its body's deadline, plus its wait in the group commit; a sweep
    // that gives up a slower one makes its commit fail (503), never a row without its object.
    abandonAfterMs: Math.max(config.files.sweepAgeMs, config.forms.uploadTimeoutMs),
  });
}
