import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './config.ts';

/** A non-default value for every variable loadConfig reads. */
const EVERY_VARIABLE = {
  PORT: '8080',
  HOST: '127.0.0.1',
  DATABASE_URL: 'postgres://u@h:5432/db',
  FLAGPOST_DATA_DIR: '/tmp/x',
  FLAGPOST_ADMIN_TOKEN: 'a-long-enough-token',
  FLAGPOST_ADMIN_MAX_FAILURES: '7',
  FLAGPOST_ADMIN_LOCKOUT_MS: '60000',
  FLAGPOST_PASSWORD_CONCURRENCY: '3',
  FLAGPOST_PASSWORD_QUEUE: '9',
  FLAGPOST_PASSWORD_PER_CLIENT: '4',
  FLAGPOST_PUBLIC_URL: 'https://flags.example.com/',
  FLAGPOST_SESSION_TTL_MS: '3600000',
  FLAGPOST_RETENTION_INTERVAL_MS: '60000',
  FLAGPOST_AUDIT_RETENTION_DAYS: '90',
  FLAGPOST_USAGE_RETENTION_DAYS: '30',
  FLAGPOST_USAGE_FLUSH_MS: '5000',
  FLAGPOST_TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9001/turnstile',
  FLAGPOST_HCAPTCHA_VERIFY_URL: 'http://127.0.0.1:9001/hcaptcha',
  FLAGPOST_RECAPTCHA_VERIFY_URL: 'http://127.0.0.1:9001/recaptcha',
  FLAGPOST_CAPTCHA_TIMEOUT_MS: '2500',
  FLAGPOST_MAX_STREAMS_PER_CLIENT: '5',
  FLAGPOST_STREAM_HEARTBEAT_MS: '1500',
  FLAGPOST_MAX_STREAMS: '700',
  FLAGPOST_STREAM_MAX_AGE_MS: '60000',
  FLAGPOST_METRICS_PORT: '9464',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4319/v1/traces',
  FLAGPOST_METRICS_HOST: '127.0.0.2',
  FLAGPOST_FLAGD_SYNC_PORT: '8013',
  FLAGPOST_FLAGD_SYNC_HOST: '::1',
  FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS: '300',
  FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS_PER_CLIENT: '4',
  FLAGPOST_FLAGD_SYNC_IDLE_MS: '5000',
  FLAGPOST_FLAGD_SYNC_MAX_AGE_MS: '600000',
  FLAGPOST_DASHBOARD_DIR: '/tmp/web',
  LOG_LEVEL: 'debug',
  FLAGPOST_BODY_LIMIT_BYTES: '2048',
  FLAGPOST_MAX_FILE_BYTES: '2000000',
  FLAGPOST_MAX_FILES: '3',
  FLAGPOST_MAX_FIELDS: '50',
  FLAGPOST_MAX_FIELD_BYTES: '1000',
  FLAGPOST_MAX_CONCURRENT_UPLOADS: '4',
  FLAGPOST_UPLOAD_TIMEOUT_MS: '5000',
  FLAGPOST_MAX_UPLOADS_PER_CLIENT: '6',
  FLAGPOST_MAX_TEXT_BYTES: '200000',
  FLAGPOST_LIST_PAGE_BYTES: '300000',
  FLAGPOST_OUTBOX_POLL_MS: '250',
  FLAGPOST_OUTBOX_RETRY_BASE_MS: '500',
  FLAGPOST_OUTBOX_MAX_ATTEMPTS: '3',
  FLAGPOST_WEBHOOK_TIMEOUT_MS: '2500',
  FLAGPOST_WEBHOOK_TARGETS: 'any',
  FLAGPOST_RATE_LIMIT_MAX: '10',
  FLAGPOST_RATE_LIMIT_WINDOW_MS: '2000',
  FLAGPOST_REQUEST_TIMEOUT_MS: '9000',
  FLAGPOST_IDLE_TIMEOUT_MS: '8000',
  FLAGPOST_MAX_CONNECTIONS: '77',
  FLAGPOST_DRAIN_DELAY_MS: '4000',
  FLAGPOST_EVENTS_RETENTION_DAYS: '45',
  FLAGPOST_RELEASE_CHECK_MS: '5000',
  REDIS_URL: 'redis://127.0.0.1:6379',
  SMTP_URL: 'smtp://localhost:2525',
  SMTP_FROM: 'Forms <forms@example.com>',
  FLAGPOST_TRUST_PROXY: '10.0.0.0/8, loopback',
  FLAGPOST_FLAG_FAST_PATH: 'false',
  FLAGPOST_FILE_STORAGE: 'fs',
  FLAGPOST_FILE_SWEEP_AGE_MS: '120000',
  FLAGPOST_S3_BUCKET: 'flagpost-files',
  FLAGPOST_S3_REGION: 'eu-central-1',
  FLAGPOST_S3_ENDPOINT: 'http://127.0.0.1:9000',
  FLAGPOST_S3_FORCE_PATH_STYLE: 'true',
  FLAGPOST_S3_ACCESS_KEY_ID: 'flagpost',
  FLAGPOST_S3_SECRET_ACCESS_KEY: 'flagpost-secret',
  FLAGPOST_WORKERS: '3',
  FLAGPOST_OIDC_ISSUER: 'https://idp.example.com/realms/main',
  FLAGPOST_OIDC_CLIENT_ID: 'flagpost',
  FLAGPOST_OIDC_CLIENT_SECRET: 'a client secret',
  FLAGPOST_OIDC_NAME: 'Keycloak',
  FLAGPOST_OIDC_SCOPES: 'openid email groups',
  FLAGPOST_OIDC_GROUPS_CLAIM: 'realm_access.roles',
  FLAGPOST_OIDC_ROLES: 'admins=owner, devs=editor, *=viewer',
  FLAGPOST_OIDC_REDIRECT_URL: 'https://flags.example.com/admin/v1/sso/callback?x=1',
  FLAGPOST_SSO_ONLY: 'true',
  FLAGPOST_SSO_BREAK_GLASS_EMAIL: ' Root@Example.com ',
  FLAGPOST_SSO_STARTS_PER_CLIENT: '7',
  FLAGPOST_SSO_MAX_PENDING: '70',
};

describe('loadConfig', () => {
  it('uses the documented defaults (contract D2)', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.forms.maxFileBytes, 1_048_576);
    assert.equal(config.forms.maxFiles, 5);
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.deepEqual(
      config.flagdSync,
      { port: undefined, host: '127.0.0.1', maxConnections: 1000, maxConnectionsPerClient: 20, idleMs: 30_000, maxAgeMs: 3_600_000 },
      'the flagd sync service is off unless a port is set, and binds loopback unless a host is set',
    );
    assert.equal(config.metrics.host, '127.0.0.1', 'the metrics listener binds loopback unless a host is set (issue 29)');
    assert.deepEqual(config.streams, { perClient: 100, heartbeatMs: 20_000, total: 5000, maxAgeMs: 3_600_000 });
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.forms));
  });

  it('reads every variable', () => {
    const config = loadConfig(EVERY_VARIABLE);
    assert.deepEqual(config, {
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'postgres://u@h:5432/db',
      dataDir: '/tmp/x',
      adminToken: 'a-long-enough-token',
      adminLockout: { maxFailures: 7, windowMs: 60_000 },
      passwordWork: { concurrency: 3, queue: 9, perClient: 4 },
      publicUrl: 'https://flags.example.com',
      streams: { perClient: 5, heartbeatMs: 1500, total: 700, maxAgeMs: 60_000 },
      metrics: { port: 9464, host: '127.0.0.2' },
      tracing: { otlpEndpoint: 'http://127.0.0.1:4318', otlpTracesEndpoint: 'http://127.0.0.1:4319/v1/traces' },
      flagdSync: { port: 8013, host: '::1', maxConnections: 300, maxConnectionsPerClient: 4, idleMs: 5000, maxAgeMs: 600_000 },
      captcha: {
        urls: { turnstile: 'http://127.0.0.1:9001/turnstile', hcaptcha: 'http://127.0.0.1:9001/hcaptcha', recaptcha: 'http://127.0.0.1:9001/recaptcha' },
        timeoutMs: 2500,
      },
      retentionIntervalMs: 60_000,
      auditRetentionDays: 90,
      usage: { retentionDays: 30, flushMs: 5000 },
      events: { retentionDays: 45 },
      releases: { checkMs: 5000 },
      sessionTtlMs: 3_600_000,
      sso: {
        issuer: 'https://idp.example.com/realms/main',
        clientId: 'flagpost',
        clientSecret: 'a client secret',
        name: 'Keycloak',
        scopes: 'openid email groups',
        groupsClaim: 'realm_access.roles',
        roles: [
          { group: 'admins', role: 'owner' },
          { group: 'devs', role: 'editor' },
          { group: '*', role: 'viewer' },
        ],
        redirectUrl: 'https://flags.example.com/admin/v1/sso/callback?x=1',
        postLogoutUrl: 'https://flags.example.com/sign-in',
        only: true,
        breakGlassEmail: 'root@example.com',
        publicUrl: 'https://flags.example.com',
        startsPerClient: 7,
        maxPending: 70,
      },
      dashboardDir: '/tmp/web',
      logLevel: 'debug',
      bodyLimit: 2048,
      forms: {
        maxFileBytes: 2_000_000,
        maxFiles: 3,
        maxFields: 50,
        maxFieldBytes: 1000,
        maxConcurrentUploads: 4,
        uploadTimeoutMs: 5000,
        maxUploadsPerClient: 6,
        maxTextBytes: 200_000,
        listPageBytes: 300_000,
      },
      outbox: { pollMs: 250, retryBaseMs: 500, maxAttempts: 3, webhookTimeoutMs: 2500, webhookTargets: 'any' },
      rateLimit: { max: 10, windowMs: 2000 },
      connections: { requestTimeoutMs: 9000, idleTimeoutMs: 8000, max: 77, drainDelayMs: 4000 },
      redisUrl: 'redis://127.0.0.1:6379',
      smtpUrl: 'smtp://localhost:2525',
      mailFrom: 'Forms <forms@example.com>',
      trustProxy: ['10.0.0.0/8', 'loopback'],
      flagFastPath: false,
      files: {
        storage: 'fs',
        sweepAgeMs: 120_000,
        s3: {
          bucket: 'flagpost-files',
          region: 'eu-central-1',
          endpoint: 'http://127.0.0.1:9000',
          forcePathStyle: true,
          credentials: { accessKeyId: 'flagpost', secretAccessKey: 'flagpost-secret' },
        },
      },
      workers: 3,
    });
  });

  it('takes FLAGPOST_FILE_STORAGE=s3 only with a bucket, and S3 keys only in pairs', () => {
    assert.deepEqual(loadConfig({}).files, { storage: 'db', sweepAgeMs: 900_000, s3: undefined });
    assert.throws(() => loadConfig({ FLAGPOST_FILE_STORAGE: 's3' }), /FLAGPOST_FILE_STORAGE=s3 needs FLAGPOST_S3_BUCKET/);
    assert.throws(() => loadConfig({ FLAGPOST_FILE_STORAGE: 'disk' }), /FLAGPOST_FILE_STORAGE must be one of db, fs, s3/);
    assert.throws(() => loadConfig({ FLAGPOST_S3_BUCKET: 'b', FLAGPOST_S3_ACCESS_KEY_ID: 'k' }), /go together/);
    const aws = loadConfig({ FLAGPOST_FILE_STORAGE: 's3', FLAGPOST_S3_BUCKET: 'b' }).files.s3;
    assert.deepEqual(
      aws,
      { bucket: 'b', region: undefined, endpoint: undefined, forcePathStyle: false, credentials: undefined },
      'AWS: the standard environment',
    );
  });

  it('runs one process unless FLAGPOST_WORKERS asks for more, and one worker per core for auto', () => {
    assert.equal(loadConfig({}).workers, 1);
    assert.equal(loadConfig({ FLAGPOST_WORKERS: 'auto' }).workers, os.availableParallelism());
    assert.equal(loadConfig({ FLAGPOST_WORKERS: ' AUTO ' }).workers, os.availableParallelism());
    for (const bad of ['0', 'many', '2.5', '1025']) {
      assert.throws(() => loadConfig({ FLAGPOST_WORKERS: bad }), new RegExp(`FLAGPOST_WORKERS must be auto or a whole number from 1 to 1024, got "${bad}"`));
    }
  });

  it('gives every variable a non-default test value: leaving any one out changes the config', () => {
    const full = loadConfig(EVERY_VARIABLE);
    for (const name of Object.keys(EVERY_VARIABLE)) {
      const { [name]: _left, ...others } = EVERY_VARIABLE as Record<string, string>;
      // Leaving out the one variable others depend on (FLAGPOST_OIDC_ISSUER) is refused: it is read too.
      let config: unknown;
      try {
        config = loadConfig(others);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        continue;
      }
      assert.notDeepEqual(config, full, `${name} is read with its default value, or not at all`);
    }
  });

  it('has a test value for every variable src/config.ts reads', () => {
    const source = fs.readFileSync(path.join(import.meta.dirname, 'config.ts'), 'utf8');
    // `env.NAME`, `env['NAME']` and any helper call whose first argument names one, e.g. `int('NAME', ...)`.
    const pattern = /\benv(?:\.|\[\s*['"`])([A-Z][A-Z0-9_]*)|\b[A-Za-z_$][\w$]*\(\s*['"`]([A-Z][A-Z0-9_]*)['"`]/g;
    const read = new Set([...source.matchAll(pattern)].map((m) => (m[1] ?? m[2])!));
    assert.ok(read.size >= 30, `found only ${read.size} variables in src/config.ts`);
    assert.deepEqual([...read].sort(), Object.keys(EVERY_VARIABLE).sort());
  });

  it('turns single sign-on off without an issuer, and refuses a half or unsafe configuration', () => {
    assert.equal(loadConfig({}).sso, undefined);
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    assert.deepEqual(problems({ FLAGPOST_OIDC_CLIENT_ID: 'x' }), ['FLAGPOST_OIDC_CLIENT_ID and FLAGPOST_OIDC_CLIENT_SECRET need FLAGPOST_OIDC_ISSUER']);
    assert.deepEqual(problems({ FLAGPOST_SSO_ONLY: 'true' }), ['FLAGPOST_SSO_ONLY needs FLAGPOST_OIDC_ISSUER']);
    assert.deepEqual(
      problems({
        FLAGPOST_OIDC_ISSUER: 'http://idp.example.com',
        FLAGPOST_OIDC_CLIENT_ID: 'x',
        FLAGPOST_OIDC_CLIENT_SECRET: 'y',
        FLAGPOST_OIDC_ROLES: 'a=root',
      }),
      [
        'FLAGPOST_OIDC_ISSUER must use https: (http: only for a provider on loopback)',
        'FLAGPOST_OIDC_ROLES must list group=role pairs with a role of owner, editor, viewer, got "a=root"',
        'FLAGPOST_OIDC_ROLES must map at least one group to a role (e.g. flagpost-admins=owner,*=viewer)',
      ],
    );
    const local = loadConfig({
      FLAGPOST_OIDC_ISSUER: 'http://127.0.0.1:9000',
      FLAGPOST_OIDC_CLIENT_ID: 'x',
      FLAGPOST_OIDC_CLIENT_SECRET: 'y',
      FLAGPOST_OIDC_ROLES: 'g=viewer',
    });
    assert.equal(local.sso?.redirectUrl, 'http://localhost:3000/admin/v1/sso/callback');
    assert.equal(local.sso?.name, 'SSO');
    assert.equal(local.sso?.groupsClaim, 'groups');
  });

  it('lists every bad variable at once', () => {
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', FLAGPOST_ADMIN_TOKEN: 'short', LOG_LEVEL: 'loud', FLAGPOST_MAX_FILES: '-1' });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      const text = error.problems.join('\n');
      for (const name of ['PORT', 'DATABASE_URL', 'FLAGPOST_ADMIN_TOKEN', 'LOG_LEVEL', 'FLAGPOST_MAX_FILES']) {
        assert.match(text, new RegExp(name));
      }
      assert.equal(error.problems.length, 5);
    }
  });
});
