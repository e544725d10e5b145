export { FileStorage, type FileStorageLog, FILE_STORE_RETRY_AFTER_SECONDS, type ReferencedKeys, type SweepRound } from './file-storage.service.ts';
export { FileObjectStore } from './file-object.store.ts';
export { FsObjectStore } from './fs.object-store.ts';
export { S3ObjectStore, type S3Settings } from './s3.object-store.ts';
export type { ObjectStore } from './object-store.ts';
export {
  FILE_STORAGE_KINDS,
  type FileLocation,
  type FileStorageKind,
  type ObjectLocation,
  type ObjectStorageKind,
  objectKeyOf,
  objectOf,
  type ReceivedFile,
} from './file-storage.ts';
