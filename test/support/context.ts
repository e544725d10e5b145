import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { compose, type Ports, type Services } from '../../src/compose.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/db/database.ts';
import { openDb, type DbHandle } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { checkingSerializerCompiler } from './response-check.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** The engines every suite runs on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function dialects(): Dialect[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A fresh, empty database of one engine: a temporary SQLite file or a new PostgreSQL schema. */
export interface TestDatabase {
  dialect: Dialect;
  /** Environment for loadConfig that points at this database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-test-'));
  // No dashboard unless a suite builds one: whether dist/web exists (npm run build) must not change answers.
  const noDashboard = path.join(dataDir, 'no-dashboard');
  if (dialect === 'sqlite') {
    return {
      dialect,
      env: { FLAGPOST_DATA_DIR: dataDir, FLAGPOST_DASHBOARD_DIR: noDashboard },
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const base = process.env.TEST_DATABASE_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    dialect,
    env: { FLAGPOST_DATA_DIR: dataDir, DATABASE_URL: url.toString(), FLAGPOST_DASHBOARD_DIR: noDashboard },
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestContext {
  dialect: Dialect;
  app: FastifyInstance;
  services: Services;
  config: Config;
  handle: DbHandle;
  database: TestDatabase;
  /** An admin API call with the test admin token; `body` is sent as JSON. */
  admin(method: InjectOptions['method'], url: string, body?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * Password hashes in tests: scrypt with N = 2^10 instead of production's 2^15, 32 times less work per
 * sign-in or new password. Every hash records its parameters, so the code paths are the same.
 */
export const TEST_SCRYPT_COST = { N: 2 ** 10, r: 8, p: 1 };

/** One Flagpost instance on an existing test database, wired as main.ts wires it, not listening. */
export async function startInstance(database: TestDatabase, extraEnv: Record<string, string> = {}, ports: Partial<Ports> = {}) {
  const config = loadConfig({ FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', ...database.env, ...extraEnv });
  const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4 });
  await migrateToLatest(handle.db);
  const services = await compose(config, handle, { scryptCost: TEST_SCRYPT_COST, ...ports });
  // Every JSON answer of every test is checked against its route's response schema (docs/adr/0010).
  const app = await buildApp(services, { logger: false, serializerCompiler: checkingSerializerCompiler });
  await app.ready();
  await services.start();
  return { config, handle, services, app };
}

/** Builds the real app on a fresh database of `dialect`, with extra environment variables. */
export async function createTestContext(dialect: Dialect, extraEnv: Record<string, string> = {}, ports: Partial<Ports> = {}): Promise<TestContext> {
  const database = await createTestDatabase(dialect);
  const { config, handle, services, app } = await startInstance(database, extraEnv, ports);
  return {
    dialect,
    app,
    services,
    config,
    handle,
    database,
    admin: (method, url, body) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await app.close();
      await services.stop();
      await handle.close();
      await database.drop();
    },
  };
}

/**
 * Runs a suite once per engine against a fresh app and database. The callback receives a getter,
 * since the context exists only once `before` has run.
 */
export function forEachDialect(
  title: string,
  suite: (ctx: () => TestContext) => void,
  extraEnv: Record<string, string> = {},
  ports: Partial<Ports> = {},
): void {
  for (const dialect of dialects()) {
    describe(`${title} [${dialect}]`, () => {
      let context: TestContext | undefined;
      before(async () => {
        context = await createTestContext(dialect, extraEnv, ports);
      });
      after(async () => {
        await context?.close();
      });
      suite(() => {
        if (!context) throw new Error('test context is not ready');
        return context;
      });
    });
  }
}
