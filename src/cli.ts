import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { AdminTokenService } from './identity/index.ts';
import { SettingsStore } from './admin/index.ts';
import type { Actor } from './audit/index.ts';
import type { Services } from './compose.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { backupSqlite } from './db/backup.ts';
import { openDb } from './db/connect.ts';
import { migrateToLatest } from './db/migrate.ts';
import { FILE_STORAGE_KINDS, type FileStorageKind } from './files/index.ts';
import { applyCommand, CommandError, exportCommand, remoteOptions } from './commands/project-document.cli.ts';
import { FileMigration, SubmissionStore } from './submissions/index.ts';
import { importUnleashCommand } from './commands/unleash.cli.ts';

// Operator commands of the server package (issue 11): `npm run flagpost -- <command>`. They read the
// same environment as the server (DATABASE_URL, FLAGPOST_DATA_DIR, ...). Exit codes: 0 done, 1 failed,
// 2 cannot be done here (usage, or a command that does not apply to this configuration).

const USAGE = `Usage: npm run flagpost -- <command>

Commands:
  backup <file>         Copy the SQLite database to <file> while the server runs (online, consistent,
                        checked). On PostgreSQL, use pg_dump (explained when you run it).
  vacuum                Give the space of deleted submissions and files back to the file system (SQLite;
                        a one-time conversion of databases created before retention; stop the server first).
  reset-admin-token     Replace the admin token and print the new one once; restart the server(s)
                        afterwards. Not available while FLAGPOST_ADMIN_TOKEN is set.
  create-owner <email>  Create an owner account (the first member), with the password in
                        FLAGPOST_OWNER_PASSWORD, or a generated one printed once.
  healthcheck [--live]  Ask this machine's server whether it is ready (GET /readyz on PORT; with --live,
                        whether it serves at all: GET /livez). Exit 0 yes, 1 no. For container health
                        checks: needs no curl.
  migrate-files --to <db|fs|s3>
                        Move every uploaded file that is not in the given storage there (database, the
                        data folder, or the S3 bucket of FLAGPOST_S3_*), one file at a time, while the
                        server runs. Safe to stop and to run again: it moves what is left.

Flags as code, against a running Flagpost (FLAGPOST_URL, default http://127.0.0.1:$PORT; FLAGPOST_TOKEN, a
personal access token; a file ending in .yaml or .yml is YAML, any other JSON):
  export <projectKey> <file>
                        Write the project (environments, flags, variants, rules, segments, prerequisites;
                        no keys, secrets or submissions) as one document, the same on every export.
  apply <file> [--dry-run] [--project <projectKey>] [--bypass-protection]
                        Make the project match the document in one transaction: flags and segments not in
                        it are deleted, environments never. A protected environment's changes become one
                        change request, submitted for review (its address is printed); applied again while
                        it is open, the same request is kept, or updated (approvals reset). --dry-run prints
                        the differences only. Without --project, the project named in the document
                        (created when there is none). --bypass-protection (owners, an emergency; recorded
                        in the audit log) writes protected environments directly.
  import unleash <file> [--project <projectKey>] [--name <projectName>] [--environment <name>] [--dry-run]
                        Import an Unleash admin export or client state (JSON) into a new project (or
                        --project): toggles, strategies, segments, variants, dependencies; prints what
                        could not be carried over.

  help                  This text.
`;

/** How the audit log names the operator of these commands (they hold the database, like the admin token). */
const COMMAND_LINE: Actor = { type: 'admin_token', id: null, label: 'command line' };

/** Under Docker's and Kubernetes' usual probe timeouts (3 s and more). */
const HEALTHCHECK_TIMEOUT_MS = 2500;

/** The server's address on this machine: a wildcard listening address is reached through loopback. */
function healthUrl(config: Config, path: string): string {
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}${path}`;
}

/**
 * Runs a command on this database's services, composed as the server composes them (same settings) and
 * never started: no periodic job, no change feed, no listener. Log lines go to stderr, warnings and up.
 * `announceCreatedToken`: the first process to reach a database creates its admin token (compose); a
 * command that did prints it once, as the server would have.
 */
async function withServices(config: Config, announceCreatedToken: boolean, run: (services: Services) => Promise<void>): Promise<void> {
  const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await migrateToLatest(handle.db);
    const log = pino({ level: config.logLevel === 'silent' ? 'silent' : 'warn' }, process.stderr);
    // Loaded here, not at the top: `healthcheck` (a container probe) starts without the whole server.
    const { compose } = await import('./compose.ts');
    const services = await compose(config, handle, { log });
    try {
      if (announceCreatedToken && services.createdAdminToken) {
        process.stdout.write(`Flagpost created an admin token. Save it now, it will not be shown again:\n\n  ${services.createdAdminToken}\n\n`);
      }
      await run(services);
    } finally {
      await services.stop();
    }
  } finally {
    await handle.close();
  }
}

function fail(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'export' || command === 'apply' || command === 'import') {
    const options = remoteOptions(process.env, (text) => process.stdout.write(text));
    await (command === 'export' ? exportCommand(args, options) : command === 'apply' ? applyCommand(args, options) : importUnleashCommand(args, options));
    return;
  }
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) fail(1, error.message);
    throw error;
  }

  if (command === 'healthcheck') {
    if (args.length > 1 || (args.length === 1 && args[0] !== '--live')) fail(2, `healthcheck takes only --live.\n\n${USAGE}`);
    const url = healthUrl(config, args[0] === '--live' ? '/livez' : '/readyz');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS) });
      const body = await res.text();
      if (res.status === 200) {
        process.stdout.write(`${url}: ${res.status} ${body}\n`);
        return;
      }
      fail(1, `${url}: ${res.status} ${body}`);
    } catch (error) {
      fail(1, `${url}: no answer (${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)})`);
    }
  }

  if (command === 'backup') {
    const [file] = args;
    if (!file || args.length > 1) fail(2, `backup needs one file name.\n\n${USAGE}`);
    if (config.databaseUrl) {
      fail(
        2,
        "Flagpost runs on PostgreSQL here (DATABASE_URL is set): back it up with PostgreSQL's own tool, which takes a\n" +
          'consistent snapshot while the server runs:\n\n' +
          '  pg_dump --format=custom --file=flagpost.dump "$DATABASE_URL"\n\n' +
          'and restore into an empty database with: pg_restore --dbname="$DATABASE_URL" flagpost.dump',
      );
    }
    const source = path.join(config.dataDir, 'flagpost.db');
    const { bytes, ms } = await backupSqlite(source, file);
    process.stdout.write(`Backed up ${source} to ${path.resolve(file)}: ${(bytes / 1024 / 1024).toFixed(1)} MB in ${ms.toFixed(0)} ms, integrity ok.\n`);
    return;
  }

  if (command === 'vacuum') {
    if (args.length > 0) fail(2, USAGE);
    if (config.databaseUrl) {
      fail(
        2,
        'PostgreSQL reuses the space of deleted rows by itself (autovacuum). To give it back to the file system,\nrun VACUUM FULL on the tables during a quiet moment: psql "$DATABASE_URL" -c \'VACUUM FULL submission_files, submissions\'',
      );
    }
    const file = path.join(config.dataDir, 'flagpost.db');
    const db = new SQLite(file, { fileMustExist: true });
    try {
      const before = fs.statSync(file).size;
      db.pragma('busy_timeout = 10000');
      db.pragma('auto_vacuum = INCREMENTAL');
      db.exec('VACUUM');
      process.stdout.write(
        `Vacuumed ${file}: ${(before / 1024 / 1024).toFixed(1)} MB before, ${(fs.statSync(file).size / 1024 / 1024).toFixed(1)} MB after; deleted data now gives its space back as it goes.\n`,
      );
    } finally {
      db.close();
    }
    return;
  }

  if (command === 'reset-admin-token') {
    if (args.length > 0) fail(2, USAGE);
    if (config.adminToken) fail(2, 'FLAGPOST_ADMIN_TOKEN is set: the admin token is the one in your environment. Change it there and restart.');
    // A token created by this very composition is replaced at once: only the new one is printed.
    await withServices(config, false, async ({ handle, audit, identity }) => {
      const token = await handle.db.transaction().execute(async (trx) => {
        const replaced = await AdminTokenService.reset(trx, new SettingsStore());
        await audit.record(trx, COMMAND_LINE, { entity: 'settings', entityId: 'admin_token', action: 'admin_token.reset' });
        return replaced;
      });
      // The sessions the old token opened end with it (a restarted server also refuses any left over).
      const ended = await identity.sessions.closeAdminTokenSessions();
      process.stdout.write(
        `The admin token was replaced. Save the new one now, it will not be shown again:\n\n  ${token}\n\n` +
          `${ended} dashboard session(s) opened with the old token ended.\n` +
          'Restart every Flagpost server of this database: running servers keep accepting the old token until then.\n',
      );
    });
    return;
  }

  if (command === 'create-owner') {
    const [email] = args;
    if (!email || args.length > 1 || !/^[^\s@]+@[^\s@]+$/.test(email)) fail(2, `create-owner needs one e-mail address.\n\n${USAGE}`);
    const given = process.env.FLAGPOST_OWNER_PASSWORD;
    if (given !== undefined && (given.length < 10 || given.length > 200)) fail(2, 'FLAGPOST_OWNER_PASSWORD must be 10 to 200 characters.');
    const password = given ?? randomBytes(15).toString('base64url');
    await withServices(config, true, async ({ identity }) => {
      const user = await identity.accounts.members.createUser({ email, password, role: 'owner' }, COMMAND_LINE);
      process.stdout.write(
        `Created the owner ${user.email}.` + (given === undefined ? ` Their password, shown once (change it after signing in):\n\n  ${password}\n` : '\n'),
      );
    });
    return;
  }

  if (command === 'migrate-files') {
    const to = args[0] === '--to' ? args[1] : args[0]?.startsWith('--to=') ? args[0].slice(5) : undefined;
    if (!to || args.length > (args[0] === '--to' ? 2 : 1) || !FILE_STORAGE_KINDS.includes(to as FileStorageKind)) {
      fail(2, `migrate-files needs --to db, --to fs or --to s3.\n\n${USAGE}`);
    }
    if (to === 's3' && !config.files.s3) fail(2, 'migrate-files --to s3 needs the bucket: set FLAGPOST_S3_BUCKET (and FLAGPOST_S3_* or the AWS environment).');
    await withServices(config, true, async ({ handle, files }) => {
      const started = Date.now();
      const done = await new FileMigration({ db: handle.db, store: new SubmissionStore(), files }).run(to as FileStorageKind, (p) => {
        if ((p.moved + p.skipped) % 100 === 0) process.stdout.write(`${p.moved} files moved...\n`);
      });
      process.stdout.write(
        `Moved ${done.moved} files to ${to} in ${((Date.now() - started) / 1000).toFixed(1)} s` +
          (done.skipped > 0 ? ` (${done.skipped} deleted or moved meanwhile)` : '') +
          `. Set FLAGPOST_FILE_STORAGE=${to} (and restart) so that new files go there too, then run this again for files received meanwhile.\n`,
      );
    });
    return;
  }

  fail(2, `Unknown command "${command}".\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof CommandError) fail(error.exitCode, error.exitCode === 2 ? `${error.message}\n\n${USAGE}` : error.message);
  fail(1, `flagpost: ${error instanceof Error ? error.message : String(error)}`);
});
