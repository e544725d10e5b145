import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { BlockList, isIP } from 'node:net';
import { MAX_MATCH_INPUT_LENGTH } from './limits.ts';
import { compileRegex } from './regex.ts';
import type { Condition, Operator } from './targeting.ts';

// One condition, two ways: as flagd JSON Logic when flagd can express it, or as a Flagpost extension
// evaluated here before flagd-core runs; its result reaches the compiled logic through the reserved
// context key `$flagpost` (callers cannot set it: context.ts strips it).

/** The reserved context key that carries extension results into the compiled logic. */
export const EXTENSION_KEY = '$flagpost';
/** The only `$flagd` attribute a condition may read: the evaluation time, in Unix seconds. */
export const TIMESTAMP_ATTRIBUTE = '$flagd.timestamp';

const SEMVER_OPS: Partial<Record<Operator, string>> = {
  semverEq: '=',
  semverLt: '<',
  semverLte: '<=',
  semverGt: '>',
  semverGte: '>=',
  semverCaret: '^',
  semverTilde: '~',
};
const NUMBER_OPS: Partial<Record<Operator, string>> = { lt: '<', lte: '<=', gt: '>', gte: '>=' };
const CASE_OPERATORS = new Set<Operator>(['equals', 'in', 'startsWith', 'endsWith', 'contains']);

/** True when flagd cannot evaluate the condition, so Flagpost does (and a flagd export cannot carry it). */
export function isExtension(c: Condition): boolean {
  if (c.operator === 'matches' || c.operator === 'inCidr' || c.operator === 'rollout') return true;
  if (c.caseInsensitive === true && CASE_OPERATORS.has(c.operator)) return true;
  if ((c.operator === 'before' || c.operator === 'after') && c.attribute !== TIMESTAMP_ATTRIBUTE) return true;
  return false;
}

/** A stable name for an extension condition: the same condition gets the same name in every flag. */
export function extensionName(c: Condition): string {
  const canonical = JSON.stringify([c.attribute, c.operator, c.values, c.caseInsensitive === true]);
  return 'x' + createHash('sha1').update(canonical).digest('base64url').slice(0, 16);
}

/** The date operand in Unix seconds; `now` is not a fixed date. */
export function dateSeconds(value: string | number | boolean): number {
  return Math.floor(Date.parse(String(value)) / 1000);
}

/**
 * The JSON Logic of a condition. Extension conditions read `{"var": "$flagpost.<name>"}` (their
 * un-negated result); negation is JSON Logic's `!` for both kinds.
 */
export function conditionLogic(c: Condition): unknown {
  const logic = isExtension(c) ? { var: `${EXTENSION_KEY}.${extensionName(c)}` } : nativeLogic(c);
  return c.negate === true ? { '!': logic } : logic;
}

function nativeLogic(c: Condition): unknown {
  const attr = { var: c.attribute };
  const [first] = c.values;
  switch (c.operator) {
    case 'equals':
      return c.values.length === 1 ? { '===': [attr, first] } : { in: [attr, c.values] };
    case 'in':
      return { in: [attr, c.values] };
    case 'startsWith':
      return { starts_with: [attr, first] };
    case 'endsWith':
      return { ends_with: [attr, first] };
    case 'contains':
      return { in: [first, attr] };
    case 'exists':
      return { '!==': [attr, null] };
    case 'before':
      return { '<': [attr, dateSeconds(first!)] };
    case 'after':
      return { '>': [attr, dateSeconds(first!)] };
    default: {
      const semver = SEMVER_OPS[c.operator];
      if (semver) return { sem_ver: [attr, semver, first] };
      const cmp = NUMBER_OPS[c.operator];
      // JSON Logic compares null as 0: a missing attribute must not be "less than 5".
      if (cmp) return { and: [{ '!==': [attr, null] }, { [cmp]: [attr, first] }] };
      throw new Error(`operator ${c.operator} has no flagd form`);
    }
  }
}

/** An own-property read of a dot path; undefined when any part is missing. */
export function readPath(context: Record<string, unknown>, path: string): unknown {
  let value: unknown = context;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The un-negated test of an extension condition, compiled once per environment. */
export type ExtensionTest = (context: Record<string, unknown>, nowMs: number) => boolean;

const MurmurHash3 = createRequire(import.meta.url)('imurmurhash') as (key: string, seed?: number) => { result(): number };

/**
 * The bucket of a value for the `rollout` operator: MurmurHash3 (x86, 32 bits) of the UTF-8 bytes of
 * `<groupId>:<value>` with `seed`, modulo `modulus`, plus one (1 to modulus). With seed 0 and modulus 100
 * this is Unleash's gradual-rollout normalisation; with seed 86028157 and the total weight, its variant
 * bucketing (docs/adr/0039). Users keep their bucket; a larger `upTo` only adds users.
 */
export function rolloutBucket(groupId: string, value: string, seed: number, modulus: number): number {
  // imurmurhash reads one byte per char below 256: the UTF-8 bytes as a binary string hash as bytes.
  const bytes = Buffer.from(`${groupId}:${value}`, 'utf8').toString('latin1');
  return (MurmurHash3(bytes, seed).result() % modulus) + 1;
}

/** The operands of `rollout` with their defaults: `above < bucket <= upTo`. */
export function rolloutOperands(values: Condition['values']): { upTo: number; groupId: string; above: number; modulus: number; seed: number } {
  const [upTo, groupId, above = 0, modulus = 100, seed = 0] = values;
  return { upTo: Number(upTo), groupId: String(groupId), above: Number(above), modulus: Number(modulus), seed: Number(seed) };
}

/** An IPv4 address that isIP accepted (four decimal octets) as a 32-bit unsigned number. */
function ipv4Number(address: string): number {
  let n = 0;
  for (const octet of address.split('.')) n = n * 256 + Number(octet);
  return n >>> 0;
}

/** Compiles an extension condition (isExtension) into its test. */
export function compileExtension(c: Condition): ExtensionTest {
  const path = c.attribute;
  switch (c.operator) {
    case 'rollout': {
      const { upTo, groupId, above, modulus, seed } = rolloutOperands(c.values);
      return (ctx) => {
        const v = readPath(ctx, path);
        // Unleash's stickiness values are strings; a number or boolean buckets as its text.
        if (v === undefined || v === null || v === '' || typeof v === 'object') return false;
        const bucket = rolloutBucket(groupId, String(v), seed, modulus);
        return bucket > above && bucket <= upTo;
      };
    }
    case 'matches': {
      const regex = compileRegex(String(c.values[0]), c.caseInsensitive === true);
      return (ctx) => {
        const v = readPath(ctx, path);
        return typeof v === 'string' && v.length <= MAX_MATCH_INPUT_LENGTH && regex.test(v);
      };
    }
    case 'inCidr': {
      // IPv6 networks in node's BlockList; IPv4 ones as (network, mask) pairs of 32-bit numbers, since
      // BlockList.check makes a SocketAddress per call, most of an IPv4 check's cost.
      const list = new BlockList();
      const v4: Array<[number, number]> = [];
      for (const cidr of c.values) {
        const [net, bits] = String(cidr).split('/');
        if (isIP(net!) === 6) list.addSubnet(net!, Number(bits), 'ipv6');
        else {
          const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
          v4.push([(ipv4Number(net!) & mask) >>> 0, mask]);
        }
      }
      const inV4 = (address: string) => {
        const n = ipv4Number(address);
        return v4.some(([network, mask]) => (n & mask) >>> 0 === network);
      };
      return (ctx) => {
        const v = readPath(ctx, path);
        if (typeof v !== 'string') return false;
        const family = isIP(v);
        if (family === 4) return inV4(v);
        if (family !== 6) return false;
        const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(v);
        return list.check(v, 'ipv6') || (mapped !== null && isIP(mapped[1]!) === 4 && inV4(mapped[1]!));
      };
    }
    case 'before':
    case 'after': {
      const fixed = c.values[0] === 'now' ? undefined : Date.parse(String(c.values[0]));
      const before = c.operator === 'before';
      return (ctx, nowMs) => {
        const at = instantOf(readPath(ctx, path));
        if (at === undefined) return false;
        const other = fixed ?? nowMs;
        return before ? at < other : at > other;
      };
    }
    default:
      return caseInsensitiveTest(c);
  }
}

/** ISO-8601 strings, or numbers as Unix seconds (flagd's `$flagd.timestamp` unit); else undefined. */
function instantOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v * 1000 : undefined;
  if (typeof v !== 'string' || !ISO_DATE.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** ISO-8601 calendar dates with an optional time and zone (what validation accepts as operands too). */
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function caseInsensitiveTest(c: Condition): ExtensionTest {
  const path = c.attribute;
  const fold = (s: string) => s.toLowerCase();
  const strings = c.values.filter((v): v is string => typeof v === 'string').map(fold);
  const others = c.values.filter((v) => typeof v !== 'string');
  const first = strings[0] ?? '';
  switch (c.operator) {
    case 'startsWith':
      return (ctx) => {
        const v = readPath(ctx, path);
        return typeof v === 'string' && fold(v).startsWith(first);
      };
    case 'endsWith':
      return (ctx) => {
        const v = readPath(ctx, path);
        return typeof v === 'string' && fold(v).endsWith(first);
      };
    case 'contains':
      return (ctx) => {
        const v = readPath(ctx, path);
        if (typeof v === 'string') return fold(v).includes(first);
        return Array.isArray(v) && v.some((item) => typeof item === 'string' && fold(item) === first);
      };
    default: {
      const set = new Set(strings);
      return (ctx) => {
        const v = readPath(ctx, path);
        return typeof v === 'string' ? set.has(fold(v)) : others.includes(v as never);
      };
    }
  }
}
