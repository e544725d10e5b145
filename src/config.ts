import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `npm run build` writes the dashboard to dist/web, beside the server bundle dist/main.js. */
const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_DASHBOARD_DIR = path.basename(HERE) === 'dist' ? path.join(HERE, 'web') : path.join(HERE, '..', 'dist', 'web');

/** Everything the process reads from its environment (contract D2), validated once at start. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** `undefined` selects the embedded SQLite file `<dataDir>/flagpost.db`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly adminToken: string | undefined;
  /** Wrong admin tokens one client address may present per window before it is locked out for the window. */
  readonly adminLockout: { readonly maxFailures: number; readonly windowMs: number };
  /** Bounds on concurrent scrypt work of one process (docs/adr/0022-sign-in-under-attack.md). */
  readonly passwordWork: { readonly concurrency: number; readonly queue: number; readonly perClient: number };
  /** How the server is reached from outside, without a trailing slash; used in redirect and page URLs. */
  readonly publicUrl: string;
  /**
   * OFREP event streams (issue 10): open streams per client address, the heartbeat interval in ms, open
   * streams of the process at most, and the age in ms at which a stream is ended (issue 29).
   */
  readonly streams: { readonly perClient: number; readonly heartbeatMs: number; readonly total: number; readonly maxAgeMs: number };
  /**
   * Traces over OTLP/HTTP (issue 23): on when either endpoint is set; the exporter reads these and the
   * other OTEL_EXPORTER_OTLP_* variables itself.
   */
  readonly tracing: { readonly otlpEndpoint: string | undefined; readonly otlpTracesEndpoint: string | undefined };
  /** The Prometheus metrics listener (issue 23): off without a port; on loopback unless its host is set (issue 29). */
  readonly metrics: { readonly port: number | undefined; readonly host: string };
  /**
   * flagd's sync gRPC service (issue 21): off without a port; on loopback unless its host is set. Its
   * HTTP/2 connections are capped in all and per client key, closed when idle (no call) and when old
   * (issue 29).
   */
  readonly flagdSync: {
    readonly port: number | undefined;
    readonly host: string;
    readonly maxConnections: number;
    readonly maxConnectionsPerClient: number;
    readonly idleMs: number;
    readonly maxAgeMs: number;
  };
  /** CAPTCHA siteverify endpoints per provider and the longest wait for one (issue 12). */
  readonly captcha: { readonly urls: { readonly turnstile: string; readonly hcaptcha: string; readonly recaptcha: string }; readonly timeoutMs: number };
  /** Milliseconds between two rounds of the retention job; 0: off. */
  readonly retentionIntervalMs: number;
  /** Audit log entries older than this many days are deleted by the retention job; 0 keeps them. */
  readonly auditRetentionDays: number;
  /** Flag usage counting (docs/adr/0035-usage-counting.md): days of hourly counts kept, ms between two flushes (0: only at shutdown). */
  readonly usage: { readonly retentionDays: number; readonly flushMs: number };
  /** Experiments' events (docs/adr/0044-event-storage.md): days of raw events kept. */
  readonly events: { readonly retentionDays: number };
  /** Releases (docs/adr/0045-releases.md): ms between two checks of the running releases' guardrails (0: none; a test runs them). */
  readonly releases: { readonly checkMs: number };
  /** How long a dashboard sign-in session lasts, in ms. */
  readonly sessionTtlMs: number;
  /** Single sign-on with an OpenID Connect provider (docs/adr/0032-identity-and-sso.md); off unless the issuer is set. */
  readonly sso: SsoConfig | undefined;
  /** The built dashboard (index.html and assets/), served at `/`. */
  readonly dashboardDir: string;
  readonly logLevel: string;
  /** Largest JSON body on the flag and admin endpoints, in bytes. */
  readonly bodyLimit: number;
  readonly forms: {
    /** Largest single uploaded file in bytes (contract D16: 1 MiB). */
    readonly maxFileBytes: number;
    readonly maxFiles: number;
    readonly maxFields: number;
    /** Largest text field value in bytes. */
    readonly maxFieldBytes: number;
    /** Multipart submissions read and stored at once; each holds up to maxFiles x maxFileBytes in memory. */
    readonly maxConcurrentUploads: number;
    /** Longest time a multipart body may take to arrive once it holds an upload slot, in ms. */
    readonly uploadTimeoutMs: number;
    /** Multipart submissions one client address may have under way (reading or waiting) at once. */
    readonly maxUploadsPerClient: number;
    /** All text of one submission together, names and values, in bytes (every encoding). */
    readonly maxTextBytes: number;
    /** Field data of one admin listing page, at most, in JSON characters; a page ends early past it. */
    readonly listPageBytes: number;
  };
  /** Where uploaded files go (issue 19, docs/adr/0030-file-storage.md). */
  readonly files: {
    /** `db`: in the database (the default, as before); `fs`: under `<dataDir>/files`; `s3`: in `s3.bucket`. */
    readonly storage: 'db' | 'fs' | 's3';
    /** Unfinished uploads and unreferenced objects older than this are swept, in ms (at least the upload timeout). */
    readonly sweepAgeMs: number;
    /** The S3 bucket and how to reach it; set whenever FLAGPOST_S3_BUCKET is (files may stay there after a switch). */
    readonly s3:
      | {
          readonly bucket: string;
          /** undefined: the standard AWS environment (AWS_REGION, the profile). */
          readonly region: string | undefined;
          readonly endpoint: string | undefined;
          readonly forcePathStyle: boolean;
          /** undefined: the standard AWS environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, instance roles...). */
          readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
        }
      | undefined;
  };
  /** Delivery of webhooks and notification e-mails from the outbox (contract D18). */
  readonly outbox: {
    /** How often the worker looks for due deliveries, in ms; 0 leaves it to explicit runOnce() calls. */
    readonly pollMs: number;
    /** Delay before the first retry in ms; each further retry waits twice as long (capped at 6 h). */
    readonly retryBaseMs: number;
    /** Attempts per delivery before it is marked failed. */
    readonly maxAttempts: number;
    readonly webhookTimeoutMs: number;
    /** Which addresses webhooks may reach (docs/adr/0012-webhook-targets.md). */
    readonly webhookTargets: 'public' | 'private' | 'any';
  };
  readonly rateLimit: {
    /** Requests per window per client IP on the public interfaces (contract D20); 0 disables. */
    readonly max: number;
    readonly windowMs: number;
  };
  /** Connections and their timeouts (issue 8: slow and idle clients must not hold the server). */
  readonly connections: {
    /** Time a client has to send a whole request, headers and body, in ms. */
    readonly requestTimeoutMs: number;
    /** A connection that sends nothing for this long is closed, in ms. */
    readonly idleTimeoutMs: number;
    /** Open connections at most; more are refused at once. */
    readonly max: number;
    /**
     * After SIGTERM, how long /readyz answers 503 while everything else is still served, in ms, so that
     * load balancers stop sending traffic before the port closes (src/shutdown.ts).
     */
    readonly drainDelayMs: number;
  };
  readonly redisUrl: string | undefined;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  /**
   * Addresses and CIDR ranges of the proxies in front of Flagpost (or `loopback`, `linklocal`,
   * `uniquelocal`): X-Forwarded-For counts only as far as these added it. Empty: no proxy is trusted.
   */
  readonly trustProxy: readonly string[];
  /** Answer warm flag GETs before Fastify routing (src/evaluation/flag.fast-path.ts); false serves them through the routes. */
  readonly flagFastPath: boolean;
  /** Worker processes behind the port (FLAGPOST_WORKERS, `auto`: one per core); 1 runs everything in this process. */
  readonly workers: number;
}

/** One line of FLAGPOST_OIDC_ROLES: members of `group` (`*`: everyone the provider signs in) get `role`. */
export interface SsoRoleMapping {
  readonly group: string;
  readonly role: 'owner' | 'editor' | 'viewer';
}

export interface SsoConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Shown on the sign-in button: "Sign in with <name>". */
  readonly name: string;
  readonly scopes: string;
  /** The claim holding the member's groups; a dotted path reaches into objects (`realm_access.roles`). */
  readonly groupsClaim: string;
  readonly roles: readonly SsoRoleMapping[];
  /** Where the provider sends the browser back (registered with the provider). */
  readonly redirectUrl: string;
  /** Where the provider's logout sends the browser afterwards. */
  readonly postLogoutUrl: string;
  /** Passwords off, except for `breakGlassEmail`'s. */
  readonly only: boolean;
  readonly breakGlassEmail: string | undefined;
  /** FLAGPOST_PUBLIC_URL: a sign-in returns only to its origin. */
  readonly publicUrl: string;
  /** Sign-ins one client key may start within the sign-in lifetime (10 minutes). */
  readonly startsPerClient: number;
  /** Sign-ins under way (started, neither completed nor expired) at most, over all clients. */
  readonly maxPending: number;
}

/** The instance roles the SSO role mapping may give (identity's ROLES; config.ts sits below the capabilities). */
const SSO_ROLES = ['owner', 'editor', 'viewer'] as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates the configuration. Every bad variable is reported at once in one
 * {@link ConfigError}; the result is frozen.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];

  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) {
      problems.push(`${name} must be a whole number, got "${raw}"`);
      return fallback;
    }
    const value = Number(raw.trim());
    if (value < min || value > max) {
      problems.push(`${name} must be between ${min} and ${max}, got ${value}`);
      return fallback;
    }
    return value;
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
        return undefined;
      }
      return raw;
    } catch {
      problems.push(`${name} is not a valid URL`);
      return undefined;
    }
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };

  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
    return fallback;
  };
  const proxies = (name: string): string[] => {
    const raw = (env[name] ?? '').trim();
    if (raw === '' || ['0', 'false', 'no'].includes(raw.toLowerCase())) return [];
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) {
      // It used to trust any X-Forwarded-For, which let every client choose its address.
      problems.push(`${name} no longer takes "${raw}": list the addresses or CIDR ranges of your proxies, e.g. loopback or 10.0.0.0/8`);
      return [];
    }
    const entries = raw.split(',').map((entry) => entry.trim());
    for (const entry of entries) {
      if (!['loopback', 'linklocal', 'uniquelocal'].includes(entry) && !isAddressOrRange(entry)) {
        problems.push(`${name} must list IP addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${entry}"`);
      }
    }
    return entries;
  };

  const port = int('PORT', 3000, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const dataDir = path.resolve(env.FLAGPOST_DATA_DIR || './data');
  const adminToken = env.FLAGPOST_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push('FLAGPOST_ADMIN_TOKEN must be at least 16 characters long');
  }
  const publicUrl = (url('FLAGPOST_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`);
  }

  const fileStorage = oneOf('FLAGPOST_FILE_STORAGE', ['db', 'fs', 's3'] as const, 'db');
  const s3Bucket = env.FLAGPOST_S3_BUCKET || undefined;
  if (fileStorage === 's3' && !s3Bucket) problems.push('FLAGPOST_FILE_STORAGE=s3 needs FLAGPOST_S3_BUCKET');
  const s3KeyId = env.FLAGPOST_S3_ACCESS_KEY_ID || undefined;
  const s3Secret = env.FLAGPOST_S3_SECRET_ACCESS_KEY || undefined;
  if ((s3KeyId === undefined) !== (s3Secret === undefined)) {
    problems.push('FLAGPOST_S3_ACCESS_KEY_ID and FLAGPOST_S3_SECRET_ACCESS_KEY go together: set both, or neither to use the standard AWS environment');
  }
  const s3Endpoint = url('FLAGPOST_S3_ENDPOINT', ['http:', 'https:']);
  const s3PathStyle = bool('FLAGPOST_S3_FORCE_PATH_STYLE', false);
  const sso = ssoOf(env, publicUrl, url, bool, int, problems);

  const config: Config = {
    port,
    host,
    databaseUrl,
    dataDir,
    adminToken,
    adminLockout: {
      maxFailures: int('FLAGPOST_ADMIN_MAX_FAILURES', 20, 1, 1_000_000),
      windowMs: int('FLAGPOST_ADMIN_LOCKOUT_MS', 15 * 60_000, 1000, 86_400_000),
    },
    passwordWork: {
      concurrency: int('FLAGPOST_PASSWORD_CONCURRENCY', 2, 1, 64),
      queue: int('FLAGPOST_PASSWORD_QUEUE', 32, 0, 10_000),
      perClient: int('FLAGPOST_PASSWORD_PER_CLIENT', 2, 1, 1000),
    },
    publicUrl,
    streams: {
      perClient: int('FLAGPOST_MAX_STREAMS_PER_CLIENT', 100, 1, 1_000_000),
      heartbeatMs: int('FLAGPOST_STREAM_HEARTBEAT_MS', 20_000, 100, 600_000),
      total: int('FLAGPOST_MAX_STREAMS', 5000, 1, 1_000_000),
      maxAgeMs: int('FLAGPOST_STREAM_MAX_AGE_MS', 3_600_000, 1000, 7 * 86_400_000),
    },
    tracing: {
      otlpEndpoint: url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
      otlpTracesEndpoint: url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']),
    },
    metrics: {
      port: env.FLAGPOST_METRICS_PORT ? int('FLAGPOST_METRICS_PORT', 0, 1, 65535) : undefined,
      // Loopback unless asked: metrics are for a local agent (the container image sets 0.0.0.0).
      host: env.FLAGPOST_METRICS_HOST || '127.0.0.1',
    },
    flagdSync: {
      port: env.FLAGPOST_FLAGD_SYNC_PORT ? int('FLAGPOST_FLAGD_SYNC_PORT', 0, 1, 65535) : undefined,
      host: env.FLAGPOST_FLAGD_SYNC_HOST || '127.0.0.1',
      maxConnections: int('FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS', 1000, 1, 1_000_000),
      maxConnectionsPerClient: int('FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS_PER_CLIENT', 20, 1, 1_000_000),
      idleMs: int('FLAGPOST_FLAGD_SYNC_IDLE_MS', 30_000, 100, 86_400_000),
      maxAgeMs: int('FLAGPOST_FLAGD_SYNC_MAX_AGE_MS', 3_600_000, 1000, 7 * 86_400_000),
    },
    captcha: {
      urls: {
        turnstile: url('FLAGPOST_TURNSTILE_VERIFY_URL', ['http:', 'https:']) ?? 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
        hcaptcha: url('FLAGPOST_HCAPTCHA_VERIFY_URL', ['http:', 'https:']) ?? 'https://api.hcaptcha.com/siteverify',
        recaptcha: url('FLAGPOST_RECAPTCHA_VERIFY_URL', ['http:', 'https:']) ?? 'https://www.google.com/recaptcha/api/siteverify',
      },
      timeoutMs: int('FLAGPOST_CAPTCHA_TIMEOUT_MS', 10_000, 100, 10_000),
    },
    retentionIntervalMs: int('FLAGPOST_RETENTION_INTERVAL_MS', 600_000, 0, 86_400_000),
    auditRetentionDays: int('FLAGPOST_AUDIT_RETENTION_DAYS', 365, 0, 36_500),
    usage: {
      retentionDays: int('FLAGPOST_USAGE_RETENTION_DAYS', 90, 1, 3650),
      flushMs: int('FLAGPOST_USAGE_FLUSH_MS', 60_000, 0, 3_600_000),
    },
    events: { retentionDays: int('FLAGPOST_EVENTS_RETENTION_DAYS', 90, 1, 3650) },
    releases: { checkMs: int('FLAGPOST_RELEASE_CHECK_MS', 30_000, 0, 3_600_000) },
    sessionTtlMs: int('FLAGPOST_SESSION_TTL_MS', 12 * 3_600_000, 60_000, 90 * 86_400_000),
    sso,
    dashboardDir: env.FLAGPOST_DASHBOARD_DIR ? path.resolve(env.FLAGPOST_DASHBOARD_DIR) : DEFAULT_DASHBOARD_DIR,
    logLevel,
    bodyLimit: int('FLAGPOST_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    forms: {
      maxFileBytes: int('FLAGPOST_MAX_FILE_BYTES', 1024 * 1024, 1),
      maxFiles: int('FLAGPOST_MAX_FILES', 5, 0, 100),
      maxFields: int('FLAGPOST_MAX_FIELDS', 100, 1, 10_000),
      maxFieldBytes: int('FLAGPOST_MAX_FIELD_BYTES', 64 * 1024, 1),
      maxConcurrentUploads: int('FLAGPOST_MAX_CONCURRENT_UPLOADS', 8, 1, 1000),
      uploadTimeoutMs: int('FLAGPOST_UPLOAD_TIMEOUT_MS', 60_000, 100, 3_600_000),
      maxUploadsPerClient: int('FLAGPOST_MAX_UPLOADS_PER_CLIENT', 2, 1, 1000),
      maxTextBytes: int('FLAGPOST_MAX_TEXT_BYTES', 1024 * 1024, 1024),
      listPageBytes: int('FLAGPOST_LIST_PAGE_BYTES', 4 * 1024 * 1024, 1024),
    },
    files: {
      storage: fileStorage,
      sweepAgeMs: int('FLAGPOST_FILE_SWEEP_AGE_MS', 15 * 60_000, 1000, 7 * 86_400_000),
      s3: s3Bucket
        ? {
            bucket: s3Bucket,
            // S3-compatible stores take any region, and most expect us-east-1; on AWS, undefined reads AWS_REGION or the profile.
            region: env.FLAGPOST_S3_REGION || (s3Endpoint ? 'us-east-1' : undefined),
            endpoint: s3Endpoint,
            forcePathStyle: s3PathStyle,
            credentials: s3KeyId && s3Secret ? { accessKeyId: s3KeyId, secretAccessKey: s3Secret } : undefined,
          }
        : undefined,
    },
    outbox: {
      pollMs: int('FLAGPOST_OUTBOX_POLL_MS', 1000, 0, 3_600_000),
      retryBaseMs: int('FLAGPOST_OUTBOX_RETRY_BASE_MS', 10_000, 1, 3_600_000),
      maxAttempts: int('FLAGPOST_OUTBOX_MAX_ATTEMPTS', 10, 1, 100),
      webhookTimeoutMs: int('FLAGPOST_WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
      webhookTargets: oneOf('FLAGPOST_WEBHOOK_TARGETS', ['public', 'private', 'any'] as const, 'public'),
    },
    rateLimit: {
      max: int('FLAGPOST_RATE_LIMIT_MAX', 6000, 0),
      windowMs: int('FLAGPOST_RATE_LIMIT_WINDOW_MS', 60_000, 1000),
    },
    connections: {
      requestTimeoutMs: int('FLAGPOST_REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
      idleTimeoutMs: int('FLAGPOST_IDLE_TIMEOUT_MS', 30_000, 1000, 3_600_000),
      max: int('FLAGPOST_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
      drainDelayMs: int('FLAGPOST_DRAIN_DELAY_MS', 0, 0, 600_000),
    },
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    smtpUrl: url('SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: env.SMTP_FROM || 'Flagpost <flagpost@localhost>',
    trustProxy: proxies('FLAGPOST_TRUST_PROXY'),
    flagFastPath: bool('FLAGPOST_FLAG_FAST_PATH', true),
    workers: workerCount(env.FLAGPOST_WORKERS, (raw) => problems.push(`FLAGPOST_WORKERS must be auto or a whole number from 1 to 1024, got "${raw}"`)),
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** FLAGPOST_WORKERS: `auto` is one worker per core (what the process may use: cgroup and affinity limits count). */
function workerCount(raw: string | undefined, problem: (raw: string) => void): number {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === '') return 1;
  if (value === 'auto') return os.availableParallelism();
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (n >= 1 && n <= 1024) return n;
  problem(raw!);
  return 1;
}

function ssoOf(
  env: Env,
  publicUrl: string,
  url: (name: string, protocols: string[]) => string | undefined,
  bool: (name: string, fallback: boolean) => boolean,
  int: (name: string, fallback: number, min: number, max?: number) => number,
  problems: string[],
): SsoConfig | undefined {
  const issuer = url('FLAGPOST_OIDC_ISSUER', ['https:', 'http:']);
  const only = bool('FLAGPOST_SSO_ONLY', false);
  if (!issuer) {
    if (env.FLAGPOST_OIDC_CLIENT_ID || env.FLAGPOST_OIDC_CLIENT_SECRET)
      problems.push('FLAGPOST_OIDC_CLIENT_ID and FLAGPOST_OIDC_CLIENT_SECRET need FLAGPOST_OIDC_ISSUER');
    if (only) problems.push('FLAGPOST_SSO_ONLY needs FLAGPOST_OIDC_ISSUER');
    return undefined;
  }
  // Discovery, the code exchange and the keys travel over plain HTTP only to a provider on this machine.
  if (new URL(issuer).protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(new URL(issuer).hostname)) {
    problems.push('FLAGPOST_OIDC_ISSUER must use https: (http: only for a provider on loopback)');
  }
  const clientId = env.FLAGPOST_OIDC_CLIENT_ID ?? '';
  const clientSecret = env.FLAGPOST_OIDC_CLIENT_SECRET ?? '';
  if (!clientId) problems.push('FLAGPOST_OIDC_CLIENT_ID is required with FLAGPOST_OIDC_ISSUER');
  if (!clientSecret) problems.push('FLAGPOST_OIDC_CLIENT_SECRET is required with FLAGPOST_OIDC_ISSUER');
  const roles: SsoRoleMapping[] = [];
  for (const entry of (env.FLAGPOST_OIDC_ROLES ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.lastIndexOf('=');
    const group = entry.slice(0, at).trim();
    const role = entry.slice(at + 1).trim();
    if (at <= 0 || !group || !(SSO_ROLES as readonly string[]).includes(role)) {
      problems.push(`FLAGPOST_OIDC_ROLES must list group=role pairs with a role of ${SSO_ROLES.join(', ')}, got "${entry}"`);
    } else roles.push({ group, role: role as SsoRoleMapping['role'] });
  }
  if (roles.length === 0) problems.push('FLAGPOST_OIDC_ROLES must map at least one group to a role (e.g. flagpost-admins=owner,*=viewer)');
  const breakGlassEmail = env.FLAGPOST_SSO_BREAK_GLASS_EMAIL?.trim().toLowerCase() || undefined;
  const redirectUrl = url('FLAGPOST_OIDC_REDIRECT_URL', ['https:', 'http:']) ?? `${publicUrl}/admin/v1/sso/callback`;
  return {
    issuer,
    clientId,
    clientSecret,
    name: env.FLAGPOST_OIDC_NAME?.trim() || 'SSO',
    scopes: env.FLAGPOST_OIDC_SCOPES?.trim() || 'openid email profile',
    groupsClaim: env.FLAGPOST_OIDC_GROUPS_CLAIM?.trim() || 'groups',
    roles,
    redirectUrl,
    postLogoutUrl: `${publicUrl}/sign-in`,
    only,
    breakGlassEmail,
    publicUrl,
    startsPerClient: int('FLAGPOST_SSO_STARTS_PER_CLIENT', 20, 1, 1_000_000),
    maxPending: int('FLAGPOST_SSO_MAX_PENDING', 1000, 1, 1_000_000),
  };
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner !== null && typeof inner === 'object') deepFreeze(inner as object);
  }
  return Object.freeze(value);
}

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || !address || isIP(address) === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (isIP(address) === 4 ? 32 : 128);
}
