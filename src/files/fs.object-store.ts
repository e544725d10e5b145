import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { isObjectKey } from './file-storage.ts';
import { type ListedObject, type ObjectStore, ObjectStoreUnavailable } from './object-store.ts';

/** Objects listed per page. */
const PAGE = 500;

/**
 * Objects as files under `<dataDir>/files` (FLAGPOST_FILE_STORAGE=fs). Each object is written to a
 * temporary name, flushed to disk and renamed, and the folder is flushed too: a committed file row
 * never outlives its bytes in a power cut, and a half-written object never has its final name.
 */
export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs' as const;
  private ready: Promise<void> | undefined;

  constructor(private readonly root: string) {}

  async put(key: string, body: Readable, _contentType: string): Promise<void> {
    const file = this.pathOf(key);
    const temporary = `${file}.part`;
    let handle: fsp.FileHandle | undefined;
    try {
      await this.folder().catch((error: unknown) => {
        throw new ObjectStoreUnavailable('fs', error);
      });
      handle = await fsp.open(temporary, 'w', 0o600);
      for await (const chunk of body) await handle.write(chunk as Buffer);
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fsp.rename(temporary, file);
      await this.syncFolder();
    } catch (error) {
      await handle?.close().catch(() => {});
      await fsp.rm(temporary, { force: true }).catch(() => {});
      throw error instanceof ObjectStoreUnavailable ? error : new ObjectStoreUnavailable('fs', error);
    }
  }

  async open(key: string): Promise<Readable | undefined> {
    try {
      const handle = await fsp.open(this.pathOf(key), 'r');
      return handle.createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ObjectStoreUnavailable('fs', error);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await fsp.rm(this.pathOf(key), { force: true });
      await fsp.rm(`${this.pathOf(key)}.part`, { force: true });
    } catch (error) {
      throw new ObjectStoreUnavailable('fs', error);
    }
  }

  async *list(): AsyncIterable<ListedObject[]> {
    let names: string[];
    try {
      names = await fsp.readdir(path.join(this.root, 'files'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new ObjectStoreUnavailable('fs', error);
    }
    for (let i = 0; i < names.length; i += PAGE) {
      const page: ListedObject[] = [];
      for (const name of names.slice(i, i + PAGE)) {
        // A temporary `.part` left by a killed process lists under its object's key: the sweep treats both alike.
        const key = `files/${name.endsWith('.part') ? name.slice(0, -5) : name}`;
        if (!isObjectKey(key)) continue;
        try {
          page.push({ key, modifiedAt: (await fsp.stat(path.join(this.root, 'files', name))).mtime });
        } catch {
          // Deleted since the folder was read.
        }
      }
      yield page;
    }
  }

  close(): void {}

  private pathOf(key: string): string {
    if (!isObjectKey(key)) throw new Error(`not an object key: ${key}`);
    return path.join(this.root, key);
  }

  private folder(): Promise<void> {
    this.ready ??= fsp.mkdir(path.join(this.root, 'files'), { recursive: true, mode: 0o700 }).then(
      () => {},
      (error: unknown) => {
        this.ready = undefined;
        throw error;
      },
    );
    return this.ready;
  }

  /** A rename is durable once its folder is flushed. */
  private async syncFolder(): Promise<void> {
    const dir = await fsp.open(path.join(this.root, 'files'), fs.constants.O_RDONLY);
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
