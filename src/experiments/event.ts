// The events of experiments (issue 32): what POST /v1/track accepts, checked as one batch. Pure: the
// caller gives the time and the flags of the environment. Any bad event refuses the whole batch, naming
// the first problem as `events[3].variant: required`.

/** A user was served a variant of a flag. */
export interface Exposure {
  kind: 'exposure';
  flagKey: string;
  variant: string;
  targetingKey: string;
  /** Epoch milliseconds. */
  occurredAt: number;
}

/** Flat attributes of a tracked event: no nesting (they are stored, and exported, as they came). */
export type EventAttributes = Record<string, string | number | boolean | null>;

/** A user did something worth measuring (a purchase, a sign-up), with an optional value. */
export interface TrackedEvent {
  kind: 'track';
  name: string;
  targetingKey: string;
  value: number | null;
  attributes: EventAttributes | null;
  /** Epoch milliseconds. */
  occurredAt: number;
}

export type IncomingEvent = Exposure | TrackedEvent;

/** The first thing wrong with a batch, as `field: reason`. */
export interface EventProblem {
  field: string;
  reason: string;
}

/** The variants of a flag of the environment, or undefined for a flag it does not have. */
export type FlagVariantsOf = (flagKey: string) => ReadonlySet<string> | undefined;

export const MAX_EVENTS_PER_BATCH = 1000;
/** 1 MiB: the largest body POST /v1/track reads. */
export const MAX_TRACK_BODY_BYTES = 1_048_576;
export const MAX_KEY_LENGTH = 256;
export const MAX_ATTRIBUTES = 50;
export const MAX_ATTRIBUTE_TEXT = 1000;
/** A timestamp may be this far ahead of the server's clock (clients' clocks drift). */
export const MAX_AHEAD_MS = 5 * 60_000;
/** A timestamp may be this old (a client that was offline sends what it kept). */
export const MAX_AGE_MS = 7 * 86_400_000;

const BODY_FIELDS = new Set(['events']);
const EXPOSURE_FIELDS = new Set(['kind', 'flagKey', 'variant', 'targetingKey', 'timestamp']);
const TRACK_FIELDS = new Set(['kind', 'name', 'targetingKey', 'value', 'timestamp', 'attributes']);
/** Keys that would reach an object's prototype if a consumer copied them carelessly: refused anywhere. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** ISO-8601 date-time with a zone: `2026-11-27T10:00:00Z`, `...00.123+01:00`. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

class Refusal extends Error {
  constructor(readonly problem: EventProblem) {
    super(`${problem.field}: ${problem.reason}`);
  }
}

const refuse = (field: string, reason: string): never => {
  throw new Refusal({ field, reason });
};

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Where a problem is, as `events[3].attributes.plan`. Built only when an event is refused: a valid
 * batch of a thousand events would otherwise build thousands of these strings for nothing.
 */
const at = (index: number, ...fields: string[]): string => [`events[${index}]`, ...fields].join('.');

function checkKeys(path: (key: string) => string, value: Record<string, unknown>, allowed?: ReadonlySet<string>): void {
  for (const key of Object.keys(value)) {
    if (PROTOTYPE_KEYS.has(key)) refuse(path(key), 'not allowed');
    if (allowed && !allowed.has(key)) refuse(path(key), 'unknown field');
  }
}

function text(index: number, field: string, value: unknown, max: number, required: boolean): string | undefined {
  if (value === undefined) return required ? refuse(at(index, field), 'required') : undefined;
  if (typeof value !== 'string') return refuse(at(index, field), 'must be a string');
  if (value === '') return refuse(at(index, field), 'must not be empty');
  if (value.length > max) return refuse(at(index, field), `must be at most ${max} characters`);
  return value;
}

function timeOf(index: number, value: unknown, nowMs: number): number {
  if (value === undefined) return nowMs;
  const field = () => at(index, 'timestamp');
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value)) return refuse(field(), 'must be an ISO-8601 date-time with a time zone');
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return refuse(field(), 'must be an ISO-8601 date-time with a time zone');
  if (ms > nowMs + MAX_AHEAD_MS) refuse(field(), 'more than 5 minutes ahead of the server');
  if (ms < nowMs - MAX_AGE_MS) refuse(field(), 'older than 7 days');
  return ms;
}

function attributesOf(index: number, value: unknown): EventAttributes | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) return refuse(at(index, 'attributes'), 'must be an object');
  checkKeys((key) => at(index, 'attributes', key), value);
  const entries = Object.entries(value);
  if (entries.length > MAX_ATTRIBUTES) refuse(at(index, 'attributes'), `at most ${MAX_ATTRIBUTES} attributes`);
  const attributes: EventAttributes = {};
  for (const [key, v] of entries) {
    const field = () => at(index, 'attributes', key);
    if (key.length > MAX_KEY_LENGTH) refuse(field(), `names are at most ${MAX_KEY_LENGTH} characters`);
    if (typeof v === 'number' && !Number.isFinite(v)) refuse(field(), 'must be a finite number');
    if (typeof v === 'string' && v.length > MAX_ATTRIBUTE_TEXT) refuse(field(), `must be at most ${MAX_ATTRIBUTE_TEXT} characters`);
    if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      refuse(field(), 'must be a string, number, boolean or null (attributes are flat)');
    }
    attributes[key] = v as string | number | boolean | null;
  }
  return attributes;
}

function eventOf(index: number, raw: unknown, nowMs: number, variantsOf: FlagVariantsOf): IncomingEvent {
  if (!isPlainObject(raw)) return refuse(at(index), 'must be an object');
  if (raw.kind === 'exposure') {
    checkKeys((key) => at(index, key), raw, EXPOSURE_FIELDS);
    const flagKey = text(index, 'flagKey', raw.flagKey, MAX_KEY_LENGTH, true)!;
    const variant = text(index, 'variant', raw.variant, MAX_KEY_LENGTH, true)!;
    const targetingKey = text(index, 'targetingKey', raw.targetingKey, MAX_KEY_LENGTH, true)!;
    const occurredAt = timeOf(index, raw.timestamp, nowMs);
    const variants = variantsOf(flagKey);
    if (!variants) refuse(at(index, 'flagKey'), `no flag ${flagKey} in this environment`);
    if (!variants!.has(variant)) refuse(at(index, 'variant'), `flag ${flagKey} has no variant ${variant}`);
    return { kind: 'exposure', flagKey, variant, targetingKey, occurredAt };
  }
  if (raw.kind === 'track') {
    checkKeys((key) => at(index, key), raw, TRACK_FIELDS);
    const name = text(index, 'name', raw.name, MAX_KEY_LENGTH, true)!;
    const targetingKey = text(index, 'targetingKey', raw.targetingKey, MAX_KEY_LENGTH, true)!;
    let value: number | null = null;
    if (raw.value !== undefined && raw.value !== null) {
      if (typeof raw.value !== 'number') refuse(at(index, 'value'), 'must be a number');
      if (!Number.isFinite(raw.value)) refuse(at(index, 'value'), 'must be a finite number');
      value = raw.value as number;
    }
    const occurredAt = timeOf(index, raw.timestamp, nowMs);
    const attributes = attributesOf(index, raw.attributes);
    return { kind: 'track', name, targetingKey, value, attributes, occurredAt };
  }
  if (raw.kind === undefined) return refuse(at(index, 'kind'), 'required');
  return refuse(at(index, 'kind'), 'must be exposure or track');
}

/**
 * The events of a `POST /v1/track` body (`{"events":[...]}`), or the first problem of the batch.
 * `nowMs` is the server's time: a missing timestamp, and the window timestamps must be in.
 */
export function parseEvents(body: unknown, nowMs: number, variantsOf: FlagVariantsOf): { events: IncomingEvent[] } | { problem: EventProblem } {
  try {
    if (!isPlainObject(body)) return refuse('body', 'must be an object with events');
    checkKeys((key) => `body.${key}`, body, BODY_FIELDS);
    const list = body.events;
    if (list === undefined) return refuse('events', 'required');
    if (!Array.isArray(list)) return refuse('events', 'must be an array');
    if (list.length === 0) return refuse('events', 'must not be empty');
    if (list.length > MAX_EVENTS_PER_BATCH) return refuse('events', `at most ${MAX_EVENTS_PER_BATCH} events`);
    return { events: list.map((raw, i) => eventOf(i, raw, nowMs, variantsOf)) };
  } catch (error) {
    if (error instanceof Refusal) return { problem: error.problem };
    throw error;
  }
}
