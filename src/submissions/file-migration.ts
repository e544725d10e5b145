import type { Db } from '../db/database.ts';
import { type FileLocation, type FileStorage, type FileStorageKind, objectKeyOf, type ObjectLocation } from '../files/index.ts';
import type { SubmissionStore } from './submission.store.ts';

export interface FileMigrationDeps {
  db: Db;
  store: SubmissionStore;
  files: FileStorage;
}

export interface FileMigrationProgress {
  moved: number;
  /** Files deleted (with their submission) or moved by someone else while this run read them. */
  skipped: number;
}

/** Files read per query; each is then moved on its own. */
const PAGE = 100;

/**
 * `npm run flagpost -- migrate-files --to <db|fs|s3>` (issue 19): moves every file that is not in the
 * target storage there, one file per transaction, while the server keeps running. Each move writes the
 * target object first (recorded as an upload), then, in one transaction, points the file row at it and
 * forgets the old object, which is deleted after the commit. A run that is stopped at any point leaves
 * every file readable where its row says, and at most an upload record that the sweep cleans up; running
 * it again moves what is left.
 */
export class FileMigration {
  constructor(private readonly deps: FileMigrationDeps) {}

  async run(to: FileStorageKind, onFile: (progress: FileMigrationProgress) => void = () => {}): Promise<FileMigrationProgress> {
    const progress: FileMigrationProgress = { moved: 0, skipped: 0 };
    let after: string | undefined;
    for (;;) {
      const page = await this.deps.store.filesNotIn(this.deps.db, to, after, PAGE);
      for (const file of page) {
        if (await this.move(file, to)) progress.moved++;
        else progress.skipped++;
        onFile(progress);
      }
      if (page.length < PAGE) return progress;
      after = page[page.length - 1]!.id;
    }
  }

  private async move(file: { id: string; contentType: string; storage: FileStorageKind; objectKey: string | null }, to: FileStorageKind): Promise<boolean> {
    const { db, store, files } = this.deps;
    const from: FileLocation | undefined =
      file.storage === 'db' ? await this.inline(file.id) : { storage: file.storage, key: file.objectKey ?? objectKeyOf(file.id) };
    if (!from) return false;
    const content = from.storage === 'db' ? from.content : await files.read(from);
    let target: FileLocation;
    if (to === 'db') target = { storage: 'db', content };
    else {
      // A new key per move: an object of the old store under the same name would be the same key in the ledger.
      const object: ObjectLocation = { storage: to, key: objectKeyOf(`${file.id}${to === 'fs' ? 'F' : 'S'}${Date.now().toString(36)}`) };
      target = (await files.write(object, content, file.contentType)).location;
    }
    const old = from.storage === 'db' ? [] : [from];
    let moved = false;
    try {
      moved = await db.transaction().execute(async (trx) => {
        if (!(await store.moveFile(trx, file.id, file.storage, target))) return false;
        await files.commit(trx, [{ size: content.length, location: target }]);
        await files.forget(trx, old);
        return true;
      });
    } finally {
      if (!moved) await files.discard([{ size: content.length, location: target }]);
    }
    if (moved) await files.purge(old);
    return moved;
  }

  private async inline(fileId: string): Promise<FileLocation | undefined> {
    const content = await this.deps.store.inlineContent(this.deps.db, fileId);
    return content ? { storage: 'db', content } : undefined;
  }
}
