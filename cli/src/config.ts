import fs from 'node:fs';
import path from 'node:path';
import { CASINGS, type Casing, isCasing } from './casing.ts';
import { CliError, ExitCode } from './errors.ts';

// Settings of `flagpost code-refs`, from lowest to highest precedence: .flagsrc (Basestack's file),
// .flagpostrc.json (or --config / FLAGPOST_SCAN_CONFIG), FLAGPOST_* environment variables, command-line
// flags. Each layer is read and checked on its own, so that an error names the place it comes from.
// The files belong to the repository, which anyone who opens a pull request can change: they may not
// say where the API key goes (apiUrl) nor point the scan out of the checkout (dir); ADR 0023.

export const FAIL_ON = ['expired', 'unknown'] as const;
export type FailOn = (typeof FAIL_ON)[number];

export interface Limits {
  maxFiles: number;
  maxReferences: number;
  maxFileBytes: number;
  maxLineLength: number;
  maxUploadBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxFiles: 50_000,
  maxReferences: 10_000,
  maxFileBytes: 1024 * 1024,
  maxLineLength: 500,
  // The server's default body limit (FLAGPOST_BODY_LIMIT_BYTES).
  maxUploadBytes: 1024 * 1024,
};

/** The server refuses a lineContent longer than this. */
export const SERVER_MAX_LINE_CONTENT = 4000;
const MIN_LINE_LENGTH = 20;

const LIMIT_KEYS = ['maxFiles', 'maxReferences', 'maxFileBytes', 'maxLineLength', 'maxUploadBytes'] as const;

/** One layer of settings; every key is optional. */
export interface Settings extends Partial<Limits> {
  apiUrl?: string;
  projectKey?: string;
  environmentKey?: string;
  apiKey?: string;
  projectName?: string;
  repositoryUrl?: string;
  branch?: string;
  /** Absolute. */
  dir?: string;
  dryRun?: boolean;
  /** Scan `.env` files too (their secret-looking values are redacted like any line's). */
  scanEnvFiles?: boolean;
  failOn?: FailOn[];
  casings?: Casing[];
  patterns?: string[];
  ignore?: string[];
}

export interface Config {
  apiUrl: string;
  projectKey: string;
  environmentKey: string;
  /** Not needed for a dry run. */
  apiKey?: string;
  projectName?: string;
  repositoryUrl?: string;
  branch?: string;
  dir: string;
  dryRun: boolean;
  scanEnvFiles: boolean;
  failOn: FailOn[];
  aliases: { casings: Casing[]; patterns: string[] };
  ignore: string[];
  limits: Limits;
  /** The configuration files that were read, for the log. */
  files: string[];
  /** What the log should say about the configuration (a setting of a file that was not taken). */
  notices: string[];
}

/** Command-line values as commander hands them over (strings, booleans for switches). */
export interface FlagValues {
  apiUrl?: string;
  projectKey?: string;
  environmentKey?: string;
  apiKey?: string;
  dir?: string;
  branch?: string;
  repositoryUrl?: string;
  projectName?: string;
  dryRun?: boolean;
  scanEnvFiles?: boolean;
  failOn?: string;
  maxFiles?: string;
  maxReferences?: string;
  maxFileBytes?: string;
  maxLineLength?: string;
  maxUploadBytes?: string;
  config?: string;
}

export const FLAGSRC = '.flagsrc';
export const RC_FILE = '.flagpostrc.json';

/**
 * Environment variable of each setting that can come from the environment. The four that say which
 * Flagpost and which environment to talk to are shared with the SDKs; every other one is the scanner's
 * own, FLAGPOST_SCAN_*, so that one `.env` can hold the server's settings and the scanner's (the server
 * reads FLAGPOST_MAX_FILES and FLAGPOST_MAX_FILE_BYTES with other meanings).
 */
export const ENV_NAMES = {
  apiUrl: 'FLAGPOST_API_URL',
  projectKey: 'FLAGPOST_PROJECT_KEY',
  environmentKey: 'FLAGPOST_ENVIRONMENT_KEY',
  apiKey: 'FLAGPOST_API_KEY',
  projectName: 'FLAGPOST_SCAN_PROJECT_NAME',
  repositoryUrl: 'FLAGPOST_SCAN_REPOSITORY_URL',
  branch: 'FLAGPOST_SCAN_BRANCH',
  dir: 'FLAGPOST_SCAN_DIR',
  dryRun: 'FLAGPOST_SCAN_DRY_RUN',
  scanEnvFiles: 'FLAGPOST_SCAN_ENV_FILES',
  failOn: 'FLAGPOST_SCAN_FAIL_ON',
  maxFiles: 'FLAGPOST_SCAN_MAX_FILES',
  maxReferences: 'FLAGPOST_SCAN_MAX_REFERENCES',
  maxFileBytes: 'FLAGPOST_SCAN_MAX_FILE_BYTES',
  maxLineLength: 'FLAGPOST_SCAN_MAX_LINE_LENGTH',
  maxUploadBytes: 'FLAGPOST_SCAN_MAX_UPLOAD_BYTES',
  config: 'FLAGPOST_SCAN_CONFIG',
} as const;

/**
 * The scanner's former variable names (0.1.0, never published) that the server does not read: set, they
 * are an error naming the new one, so that a CI setting is not silently dropped. FLAGPOST_MAX_FILES and
 * FLAGPOST_MAX_FILE_BYTES are the server's and are left alone.
 */
const FORMER_ENV_NAMES: Record<string, string> = {
  FLAGPOST_PROJECT_NAME: ENV_NAMES.projectName,
  FLAGPOST_REPOSITORY_URL: ENV_NAMES.repositoryUrl,
  FLAGPOST_BRANCH: ENV_NAMES.branch,
  FLAGPOST_DIR: ENV_NAMES.dir,
  FLAGPOST_DRY_RUN: ENV_NAMES.dryRun,
  FLAGPOST_FAIL_ON: ENV_NAMES.failOn,
  FLAGPOST_MAX_REFERENCES: ENV_NAMES.maxReferences,
  FLAGPOST_MAX_LINE_LENGTH: ENV_NAMES.maxLineLength,
  FLAGPOST_MAX_UPLOAD_BYTES: ENV_NAMES.maxUploadBytes,
  FLAGPOST_CONFIG: ENV_NAMES.config,
};

const FLAG_NAMES: Record<keyof FlagValues, string> = {
  apiUrl: '--api-url',
  projectKey: '--project-key',
  environmentKey: '--environment-key',
  apiKey: '--api-key',
  dir: '--dir',
  branch: '--branch',
  repositoryUrl: '--repository-url',
  projectName: '--project-name',
  dryRun: '--dry-run',
  scanEnvFiles: '--scan-env-files',
  failOn: '--fail-on',
  maxFiles: '--max-files',
  maxReferences: '--max-references',
  maxFileBytes: '--max-file-bytes',
  maxLineLength: '--max-line-length',
  maxUploadBytes: '--max-upload-bytes',
  config: '--config',
};

const STRING_KEYS = ['apiUrl', 'projectKey', 'environmentKey', 'apiKey', 'projectName', 'repositoryUrl', 'branch'] as const;
const RC_KEYS = new Set<string>(['$schema', ...STRING_KEYS, 'dir', 'scanEnvFiles', 'aliases', 'ignore', 'failOn', ...LIMIT_KEYS]);
/** Settings a repository's files may not set (ADR 0023): where the API key and the source lines are sent. */
const NOT_FROM_FILES = ['apiUrl'] as const;
const notFromFile = (file: string, key: string) =>
  `${file}: "${key}" is not taken from a file in the repository (a pull request could send the API key elsewhere); ` +
  `set it with --api-url or ${ENV_NAMES.apiUrl}`;

const usage = (message: string) => new CliError(ExitCode.usage, message);

function readJson(file: string, label: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw usage(`${label}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usage(`${label}: not valid JSON (${(error as Error).message})`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A limit: a JSON number in a file, digits in a variable or option. */
function parseWhole(where: string, value: unknown, key: (typeof LIMIT_KEYS)[number], fromText = false): number {
  const number = fromText && typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  const min = key === 'maxLineLength' ? MIN_LINE_LENGTH : 1;
  const max = key === 'maxLineLength' ? SERVER_MAX_LINE_CONTENT : Number.MAX_SAFE_INTEGER;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < min || number > max) {
    throw usage(`${where} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}, not ${JSON.stringify(value)}`);
  }
  return number;
}

function parseFailOn(where: string, value: unknown): FailOn[] {
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) {
    throw usage(`${where} must be a comma-separated list (or, in a file, an array) of ${FAIL_ON.join(', ')}`);
  }
  const items = list.map((item: string) => item.trim()).filter((item) => item !== '');
  for (const item of items) {
    if (!(FAIL_ON as readonly string[]).includes(item)) throw usage(`${where}: unknown condition "${item}"; use ${FAIL_ON.join(', ')}`);
  }
  return [...new Set(items as FailOn[])];
}

function parseBoolean(where: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(v)) return true;
  if (['0', 'false', 'no', ''].includes(v)) return false;
  throw usage(`${where} must be true or false, not ${JSON.stringify(value)}`);
}

/** Checks that a pattern compiles and has a capture group 1 (the slug or an alias of it). */
export function checkPattern(where: string, pattern: unknown): string {
  if (typeof pattern !== 'string' || pattern === '') throw usage(`${where} must be a non-empty string (a regular expression)`);
  let groups: number;
  try {
    groups = new RegExp(`${pattern}|`).exec('')!.length - 1;
  } catch (error) {
    throw usage(`${where} is not a valid regular expression: ${(error as Error).message}`);
  }
  if (groups < 1) throw usage(`${where} needs a capture group: group 1 is the slug (or an alias of it), e.g. "flags\\\\.isEnabled\\\\((\\\\w+)\\\\)"`);
  return pattern;
}

/**
 * Basestack's `.flagsrc`: projectKey, environmentKey and apiKey; other keys are its own and left alone,
 * and so is its `apiUrl` (said in `notices`), which is not taken from a file.
 */
export function readFlagsrc(cwd: string, notices: string[] = []): Settings {
  const file = path.join(cwd, FLAGSRC);
  if (!fs.existsSync(file)) return {};
  const data = readJson(file, FLAGSRC);
  if (!isObject(data)) throw usage(`${FLAGSRC}: must be a JSON object`);
  const out: Settings = {};
  for (const key of ['projectKey', 'environmentKey', 'apiKey'] as const) {
    const value = data[key];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') throw usage(`${FLAGSRC}: "${key}" must be a string`);
    out[key] = value;
  }
  for (const key of NOT_FROM_FILES)
    if (data[key] !== undefined && data[key] !== null && data[key] !== '') notices.push(`${notFromFile(FLAGSRC, key)}; ignored`);
  return out;
}

/**
 * The scanner's own file, checked strictly: an unknown key is an error (a typo would otherwise be silent),
 * and so is `apiUrl`, which is not taken from a file.
 */
export function readRcFile(file: string): Settings {
  const label = path.basename(file);
  const data = readJson(file, label);
  if (!isObject(data)) throw usage(`${label}: must be a JSON object`);
  const out: Settings = {};
  for (const [key, value] of Object.entries(data)) {
    const where = `${label}: "${key}"`;
    if (!RC_KEYS.has(key)) throw usage(`${label}: unknown key "${key}"; known keys are ${[...RC_KEYS].filter((k) => k !== '$schema').join(', ')}`);
    if ((NOT_FROM_FILES as readonly string[]).includes(key)) throw usage(notFromFile(label, key));
    if (value === null || key === '$schema') continue;
    if ((STRING_KEYS as readonly string[]).includes(key)) {
      if (typeof value !== 'string' || value === '') throw usage(`${where} must be a non-empty string`);
      out[key as (typeof STRING_KEYS)[number]] = value;
    } else if (key === 'dir') {
      if (typeof value !== 'string' || value === '') throw usage(`${where} must be a non-empty string`);
      out.dir = path.resolve(path.dirname(file), value);
    } else if (key === 'scanEnvFiles') {
      if (typeof value !== 'boolean') throw usage(`${where} must be true or false`);
      out.scanEnvFiles = value;
    } else if ((LIMIT_KEYS as readonly string[]).includes(key)) {
      const limit = key as (typeof LIMIT_KEYS)[number];
      out[limit] = parseWhole(where, value, limit);
    } else if (key === 'failOn') {
      out.failOn = parseFailOn(where, value);
    } else if (key === 'ignore') {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw usage(`${where} must be an array of .gitignore-style patterns`);
      out.ignore = value;
    } else if (key === 'aliases') {
      if (!isObject(value)) throw usage(`${where} must be an object with "casings" and/or "patterns"`);
      for (const [aliasKey, aliasValue] of Object.entries(value)) {
        if (aliasKey === 'casings') {
          if (!Array.isArray(aliasValue)) throw usage(`${where}.casings must be an array of ${CASINGS.join(', ')}`);
          for (const casing of aliasValue) {
            if (!isCasing(casing)) throw usage(`${where}.casings: unknown casing ${JSON.stringify(casing)}; use ${CASINGS.join(', ')}`);
          }
          out.casings = [...new Set(aliasValue as Casing[])];
        } else if (aliasKey === 'patterns') {
          if (!Array.isArray(aliasValue)) throw usage(`${where}.patterns must be an array of regular expressions`);
          out.patterns = aliasValue.map((pattern, i) => checkPattern(`${where}.patterns[${i}]`, pattern));
        } else {
          throw usage(`${where}: unknown key "${aliasKey}"; use "casings" and "patterns"`);
        }
      }
    }
  }
  return out;
}

type Source = Record<string, string | boolean | undefined>;

/** Values named as in FlagValues, from the environment (names in ENV_NAMES) or from flags; empty strings are unset. */
function fromStrings(values: Source, name: (key: keyof FlagValues) => string, cwd: string): Settings {
  const get = (key: keyof FlagValues): string | undefined => {
    const value = values[key];
    return typeof value === 'string' && value.trim() !== '' ? value : undefined;
  };
  const out: Settings = {};
  for (const key of STRING_KEYS) {
    const value = get(key);
    if (value !== undefined) out[key] = value.trim();
  }
  const dir = get('dir');
  if (dir !== undefined) out.dir = path.resolve(cwd, dir);
  for (const key of LIMIT_KEYS) {
    const value = get(key);
    if (value !== undefined) out[key] = parseWhole(name(key), value, key, true);
  }
  const failOn = values.failOn;
  if (typeof failOn === 'string') out.failOn = parseFailOn(name('failOn'), failOn);
  for (const key of ['dryRun', 'scanEnvFiles'] as const) {
    const value = values[key];
    if (typeof value === 'boolean') out[key] = value;
    else if (typeof value === 'string' && value.trim() !== '') out[key] = parseBoolean(name(key), value);
  }
  return out;
}

export function fromEnv(env: Record<string, string | undefined>, cwd: string): Settings {
  for (const [former, current] of Object.entries(FORMER_ENV_NAMES)) {
    if (env[former] !== undefined && env[former]!.trim() !== '') throw usage(`${former} is now ${current} (the scanner's variables are FLAGPOST_SCAN_*)`);
  }
  const values: Source = {};
  for (const [key, envName] of Object.entries(ENV_NAMES)) values[key] = env[envName];
  return fromStrings(values, (key) => ENV_NAMES[key], cwd);
}

export function fromFlags(flags: FlagValues, cwd: string): Settings {
  return fromStrings(flags as Source, (key) => FLAG_NAMES[key], cwd);
}

/** Later layers win, key by key; an unset key leaves the earlier value. */
export function merge(...layers: Settings[]): Settings {
  const out: Settings = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value !== undefined) (out as Record<string, unknown>)[key] = value;
    }
  }
  return out;
}

export interface LoadOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  flags: FlagValues;
}

/** Reads every layer, merges them, and checks that the required settings are there. */
export function loadConfig({ cwd, env, flags }: LoadOptions): Config {
  const files: string[] = [];
  const notices: string[] = [];
  const flagsrc = readFlagsrc(cwd, notices);
  if (Object.keys(flagsrc).length > 0) files.push(path.join(cwd, FLAGSRC));

  const explicit = flags.config?.trim() || env[ENV_NAMES.config]?.trim() || undefined;
  let rc: Settings = {};
  if (explicit !== undefined) {
    const file = path.resolve(cwd, explicit);
    if (!fs.existsSync(file)) throw usage(`The configuration file ${file} does not exist (named by ${flags.config ? '--config' : ENV_NAMES.config})`);
    rc = readRcFile(file);
    files.push(file);
  } else if (fs.existsSync(path.join(cwd, RC_FILE))) {
    rc = readRcFile(path.join(cwd, RC_FILE));
    files.push(path.join(cwd, RC_FILE));
  }

  const fromEnvironment = fromEnv(env, cwd);
  const fromCommandLine = fromFlags(flags, cwd);
  const settings = merge(flagsrc, rc, fromEnvironment, fromCommandLine);
  const dryRun = settings.dryRun ?? false;

  const missing: string[] = [];
  const need = (key: 'apiUrl' | 'projectKey' | 'environmentKey' | 'apiKey') => {
    if (settings[key] === undefined) {
      const files = (NOT_FROM_FILES as readonly string[]).includes(key) ? '' : `, or "${key}" in ${RC_FILE} or ${FLAGSRC}`;
      missing.push(`${key} (${FLAG_NAMES[key]}${files ? ', ' : ' or '}${ENV_NAMES[key]}${files})`);
    }
  };
  need('apiUrl');
  need('projectKey');
  need('environmentKey');
  if (!dryRun) need('apiKey');
  if (missing.length > 0) throw usage(`Missing required setting${missing.length > 1 ? 's' : ''}:\n  ${missing.join('\n  ')}`);

  const dir = settings.dir ?? cwd;
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir);
  } catch {
    stat = undefined;
  }
  if (!stat?.isDirectory()) throw usage(`The directory to scan, ${dir}, does not exist or is not a directory`);
  if (rc.dir !== undefined && fromEnvironment.dir === undefined && fromCommandLine.dir === undefined) insideCheckout(dir, cwd, files[files.length - 1]!);

  return {
    apiUrl: checkApiUrl(settings.apiUrl!),
    projectKey: settings.projectKey!,
    environmentKey: settings.environmentKey!,
    apiKey: settings.apiKey,
    projectName: settings.projectName,
    repositoryUrl: settings.repositoryUrl,
    branch: settings.branch,
    dir,
    dryRun,
    scanEnvFiles: settings.scanEnvFiles ?? false,
    failOn: settings.failOn ?? [],
    aliases: { casings: settings.casings ?? [], patterns: settings.patterns ?? [] },
    ignore: settings.ignore ?? [],
    limits: {
      maxFiles: settings.maxFiles ?? DEFAULT_LIMITS.maxFiles,
      maxReferences: settings.maxReferences ?? DEFAULT_LIMITS.maxReferences,
      maxFileBytes: settings.maxFileBytes ?? DEFAULT_LIMITS.maxFileBytes,
      maxLineLength: settings.maxLineLength ?? DEFAULT_LIMITS.maxLineLength,
      maxUploadBytes: settings.maxUploadBytes ?? DEFAULT_LIMITS.maxUploadBytes,
    },
    files,
    notices,
  };
}

/**
 * A `dir` from a configuration file must be inside the working directory (the checkout), symbolic links
 * resolved: a repository's file may choose which of its folders is scanned, not a folder of the machine
 * (the runner's home, another checkout) whose lines would be uploaded.
 */
function insideCheckout(dir: string, cwd: string, file: string): void {
  const real = fs.realpathSync(dir);
  const root = fs.realpathSync(cwd);
  const relative = path.relative(root, real);
  if (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative)) return;
  throw usage(
    `${path.basename(file)}: "dir" resolves to ${real}, outside the working directory ${root}; ` +
      `a configuration file may only name a folder inside it (use --dir or ${ENV_NAMES.dir} to scan elsewhere)`,
  );
}

/** The base of the flag interface, e.g. http://localhost:3000/v1, without a trailing slash. */
export function checkApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`apiUrl must be an absolute http(s) URL such as http://localhost:3000/v1, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage(`apiUrl must use http or https, not ${url.protocol}`);
  if (url.search !== '' || url.hash !== '') throw usage('apiUrl must not have a query string or a fragment');
  return url.toString().replace(/\/+$/, '');
}
