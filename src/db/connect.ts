import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from 'kysely';
import { loadPg } from '../optional-packages.ts';
import type { Database, Db, Dialect } from './database.ts';

export interface DbHandle {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The connection string the pool was built from (PostgreSQL only). */
  readonly databaseUrl: string | undefined;
  /** True when the database answers a trivial query. */
  healthy(): Promise<boolean>;
  /** The PostgreSQL pool's connections (metrics); absent on SQLite. */
  poolStats?(): { total: number; idle: number; waiting: number; max: number };
  /**
   * SQLite only: runs `work` (one transaction on the connection it is given) and resolves once its
   * commit is on disk, as a commit under `synchronous = FULL` is, but with the disk flush taken off the
   * event loop (see sqliteFlushOffLoop). For writers of many small transactions (the event writer);
   * absent on PostgreSQL, whose commits never hold the event loop.
   */
  readonly writeFlushedOffLoop?: <T>(work: (db: Db) => Promise<T>) => Promise<T>;
  close(): Promise<void>;
}

export interface OpenDbOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  /** SQLite file name inside dataDir. */
  sqliteFile?: string;
  poolSize?: number;
}

/**
 * Opens the database selected by contract D2/D3: PostgreSQL for a postgres:// URL, otherwise the
 * embedded SQLite file in WAL mode.
 */
export function openDb(options: OpenDbOptions): DbHandle {
  if (options.databaseUrl) {
    const pool = new (loadPg().Pool)({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      // While the database is away, a request waits at most this long for a connection and then
      // answers 503, instead of hanging (issue 8).
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    });
    // A client that loses its connection must not crash the process. The pool listens while a client is
    // idle; while it is checked out nobody does, and a connection dropped between two queries would be an
    // unhandled 'error' event. The query in flight still fails (503), and the pool drops the client.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const max = options.poolSize ?? 10;
    return {
      db,
      dialect: 'postgres',
      databaseUrl: options.databaseUrl,
      healthy: () => answers(db),
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
      close: () => db.destroy(),
    };
  }
  fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(options.dataDir, options.sqliteFile ?? 'flagpost.db');
  ownerOnly(file);
  const sqlite = new SQLite(file);
  // Deleted rows give their pages back to the file system on `pragma incremental_vacuum` (the retention
  // job runs it). Takes effect on a new database only; an older file is converted by
  // `npm run flagpost -- vacuum` (README, Operations).
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  // Answers the mode in force: a file system without the shared memory WAL needs keeps the old journal.
  const wal = sqlite.pragma('journal_mode = WAL', { simple: true }) === 'wal';
  // FULL: an answered write survives a power loss, not only a process crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new TolerantSqliteDialect(sqlite) });
  // Asked of the file directly, not through Kysely: its one SQLite connection is held by a write
  // transaction until it commits (a large import), and health must not wait for that (issue 29).
  const healthy = async () => {
    try {
      sqlite.prepare('select 1').get();
      return true;
    } catch {
      return false;
    }
  };
  return {
    db,
    dialect: 'sqlite',
    databaseUrl: undefined,
    healthy,
    // Only in WAL mode: the flush after the commit is of the -wal file.
    writeFlushedOffLoop: wal ? (work) => sqliteFlushOffLoop(db, file, work) : undefined,
    close: () => db.destroy(),
  };
}

/**
 * A commit with its disk flush off the event loop (issue 32, docs/adr/0044-event-storage.md). Under
 * `synchronous = FULL` a WAL commit writes its pages to the -wal file and then flushes the file with
 * fdatasync, on the calling thread: better-sqlite3 is synchronous, so the event loop, and every flag
 * read waiting on it, stands still for the flush (about 5 ms on the development machine's disk; a
 * hundred commits a second held the reads half of the time). Here the transaction commits under
 * `synchronous = NORMAL` (the pages are written to the -wal file, not flushed), and the -wal file is
 * then flushed with fdatasync on libuv's thread pool before the promise resolves: when it does, the
 * commit is on disk exactly as a FULL commit would be, and the caller answers only then. The pragma is
 * set and reset while the one connection is held (Kysely's connection lock), so no other transaction
 * commits under NORMAL. Checkpoints are unchanged (NORMAL still flushes the -wal file before one, and the
 * database file after). A crash before the flush loses only commits nobody was told about.
 */
async function sqliteFlushOffLoop<T>(db: Db, file: string, work: (db: Db) => Promise<T>): Promise<T> {
  const result = await db.connection().execute(async (connection) => {
    await sql`pragma synchronous = NORMAL`.execute(connection);
    try {
      return await work(connection);
    } finally {
      await sql`pragma synchronous = FULL`.execute(connection);
    }
  });
  // Opened for each flush: no descriptor outlives the database, and a -wal file made anew after another
  // process's last connection closed is the one flushed. Through the descriptor calls, not a FileHandle:
  // in a CPU profile of the form intake, a FileHandle's close alone took about 12 µs per submission.
  await flushFile(`${file}-wal`);
  return result;
}

/** open, fdatasync and close of `file` on libuv's thread pool; resolves once the flush is done. */
function flushFile(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, 'r+', (openError, fd) => {
      if (openError) return reject(openError);
      fs.fdatasync(fd, (syncError) => {
        fs.close(fd, (closeError) => {
          const error = syncError ?? closeError;
          if (error) reject(error);
          else resolve();
        });
      });
    });
  });
}

/**
 * SQLite rolls a transaction back by itself after some errors (a full disk, an I/O error: issue 8).
 * Kysely then sends its own ROLLBACK, which fails with "no transaction is active" and replaces the
 * error that matters, so a full disk would answer 500 instead of 503. This driver skips the ROLLBACK
 * when SQLite says no transaction is open.
 *
 * Transactions begin IMMEDIATE: they take the write lock first, waiting for it up to busy_timeout. A
 * deferred BEGIN that reads and then writes fails at once with "database is locked" when another
 * connection wrote in between (SQLite cannot upgrade a stale read snapshot), which several processes on
 * one file do (FLAGPOST_WORKERS, docs/adr/0029-workers.md; the CLI beside a server). One process with its
 * one connection is not affected.
 */
class TolerantSqliteDialect extends SqliteDialect {
  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly database = withStatementCache(sqlite),
  ) {
    super({ database });
  }

  override createDriver(): Driver {
    const { sqlite, database } = this;
    const turns = new TakeTurns();
    return new (class extends SqliteDriver {
      // Kysely's own lock of the one connection wakes every waiter at each release, and all but one wait
      // again: with tens of requests waiting (a busy form intake), each release cost a turn for every one
      // of them. Waiters here take turns in order, one woken per release; Kysely's lock is then never
      // contended.
      override async acquireConnection(): Promise<DatabaseConnection> {
        await turns.take();
        return super.acquireConnection();
      }

      override async releaseConnection(): Promise<void> {
        await super.releaseConnection();
        turns.pass();
      }

      override async beginTransaction(connection: DatabaseConnection): Promise<void> {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
      }

      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (sqlite.inTransaction) await super.rollbackTransaction(connection);
      }
    })({ database });
  }
}

/** A lock whose waiters get it in the order they asked, each woken only when it is theirs. */
class TakeTurns {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  async take(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    // Handed over by `pass` with `held` still true.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  pass(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

/** Statements kept prepared, by SQL text (the least recently used goes past this). */
const CACHED_STATEMENTS = 256;

/**
 * The database as Kysely's SQLite driver sees it, keeping statements prepared. Kysely prepares every
 * query anew, and preparing costs about as much as running for the statements run most often: the event
 * writer's inserts of hundreds of rows (issue 32, docs/adr/0044-event-storage.md), whose SQL text is one
 * of a few fixed sizes, and the form intake's lookups (issue 34: preparing was an eighth of its CPU). A
 * statement is run to completion before the connection is released (Kysely runs selects with `all`), so
 * one kept is free when asked for again; one still being iterated (`busy`, a streamed select) is not
 * handed out twice: the caller gets a fresh one.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDialectConfig['database'] {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      const kept = cache.get(text);
      if (kept && !kept.busy) {
        cache.delete(text);
        cache.set(text, kept);
        return kept;
      }
      const statement = sqlite.prepare(text);
      if (!kept) {
        if (cache.size >= CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
        cache.set(text, statement);
      }
      return statement;
    },
  };
}

async function answers(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

/**
 * The database holds password hashes, tokens' hashes and submissions (issue 31 item 16): its file is the
 * owner's only (0600), whatever the umask. A new file is created so before SQLite opens it (SQLite gives its
 * -wal and -shm files the main file's mode); an existing file that others can read is narrowed, with its
 * -wal and -shm files. `:memory:` and other non-files are left alone.
 */
export function ownerOnly(file: string): void {
  if (file === ':memory:' || file.startsWith('file:')) return;
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_WRONLY, 0o600));
    for (const name of [file, `${file}-wal`, `${file}-shm`]) {
      const stat = fs.statSync(name, { throwIfNoEntry: false });
      if (stat && (stat.mode & 0o077) !== 0) fs.chmodSync(name, stat.mode & 0o700);
    }
  } catch {
    // Not ours to change (another owner, a read-only mount): SQLite's own open reports what matters.
  }
}
