// Where the bytes of uploaded files live (issue 19, docs/adr/0030-file-storage.md). Pure: no I/O.

/** FLAGPOST_FILE_STORAGE: in the database (as before 0014), in files under the data folder, or in an S3 bucket. */
export type FileStorageKind = 'db' | 'fs' | 's3';
export type ObjectStorageKind = Exclude<FileStorageKind, 'db'>;
export const FILE_STORAGE_KINDS: readonly FileStorageKind[] = ['db', 'fs', 's3'];

/** An object of a file store: its store and its key. */
export interface ObjectLocation {
  storage: ObjectStorageKind;
  key: string;
}

/** Where one file's bytes are: inline (kept in its database row) or an object. */
export type FileLocation = { storage: 'db'; content: Buffer } | ObjectLocation;

/** A file whose bytes were read to their end and are where `location` says (not yet committed). */
export interface ReceivedFile {
  size: number;
  location: FileLocation;
}

/** File ids are ULIDs (db/codec.ts): an object key never holds a path separator or dot. */
const KEY = /^files\/[0-9A-Za-z]{1,64}$/;

/** The key of a file's object: one object per file, never reused (ids are unique). */
export const objectKeyOf = (fileId: string): string => `files/${fileId}`;

/** True for keys this Flagpost writes; anything else in a bucket or folder is not its own and is left alone. */
export const isObjectKey = (key: string): boolean => KEY.test(key);

/** The object of a received file, or undefined when its bytes are inline. */
export const objectOf = (file: ReceivedFile): ObjectLocation | undefined => (file.location.storage === 'db' ? undefined : file.location);
