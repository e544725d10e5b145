import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

export interface BackupResult {
  bytes: number;
  ms: number;
}

/**
 * An online, consistent copy of the SQLite database at `source` into `target` (issue 11), taken with
 * SQLite's backup API through better-sqlite3 while the server keeps running: the copy is one moment of
 * the database, with every transaction committed before it began, and the writers are not stopped.
 * The copy is then checked with `pragma integrity_check`. An existing `target` is refused.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  if (!fs.existsSync(source)) throw new Error(`no database at ${source}`);
  if (fs.existsSync(target)) throw new Error(`${target} exists; choose a new file name`);
  fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true, mode: 0o700 });
  // The copy holds what the database holds: the owner's only (0600), created so before SQLite writes it.
  fs.closeSync(fs.openSync(target, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
  const started = performance.now();
  try {
    const db = new SQLite(source, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      await db.backup(target);
    } finally {
      db.close();
    }
  } catch (error) {
    fs.rmSync(target, { force: true });
    throw error;
  }
  const copy = new SQLite(target, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy failed its integrity check: ${String(check)}`);
  } finally {
    copy.close();
  }
  return { bytes: fs.statSync(target).size, ms: performance.now() - started };
}
