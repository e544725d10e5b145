import type { Db } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import { type FlagVariantsOf, parseEvents } from './event.ts';
import type { EventStore, PersonEvents, StoredExposure, StoredTrackedEvent } from './event.store.ts';
import type { EventWriter } from './event-writer.ts';

/** A flag as the read side holds it: its key and its variants. */
export interface ClientFlag {
  readonly slug: string;
  readonly targeting: { readonly variants: Readonly<Record<string, unknown>> };
}

export interface ClientEnvironment {
  readonly environmentId: string;
  readonly flags: readonly ClientFlag[];
}

/**
 * What POST /v1/track needs of the flag read side (a port: answered by the read model, whose warm
 * snapshots make the check of flag keys and variants free of SQL): an environment by the keys its
 * clients send, with its flags; undefined for unknown keys.
 */
export interface ClientEnvironments {
  get(projectKey: string, environmentKey: string): Promise<ClientEnvironment | undefined> | ClientEnvironment | undefined;
}

export interface EventServiceDeps {
  db: Db;
  store: EventStore;
  writer: EventWriter;
  environments: ClientEnvironments;
  clock: () => Date;
  /** FLAGPOST_EVENTS_RETENTION_DAYS. */
  retentionDays: number;
}

/** The variants of every flag of a snapshot's flag list, built once per list (a snapshot is replaced, never changed). */
const variantsByList = new WeakMap<readonly ClientFlag[], Map<string, ReadonlySet<string>>>();

function variantsOf(flags: readonly ClientFlag[]): FlagVariantsOf {
  let byKey = variantsByList.get(flags);
  if (!byKey) {
    byKey = new Map(flags.map((f) => [f.slug, new Set(Object.keys(f.targeting.variants))]));
    variantsByList.set(flags, byKey);
  }
  const map = byKey;
  return (flagKey) => map.get(flagKey);
}

/** Events in (issue 32): tracked events and exposures of clients, their retention and their personal data. */
export class EventService {
  constructor(private readonly deps: EventServiceDeps) {}

  /**
   * Checks a `POST /v1/track` body against the environment of the keys and writes its events; resolves
   * with their number once they are committed. Any bad event refuses the batch (400, nothing written).
   */
  async track(projectKey: string, environmentKey: string, body: unknown): Promise<number> {
    const environment = await this.deps.environments.get(projectKey, environmentKey);
    if (!environment) throw new AppError('forbidden', messages.clientKeysUnknown);
    const parsed = parseEvents(body, this.deps.clock().getTime(), variantsOf(environment.flags));
    if ('problem' in parsed) {
      const { field, reason } = parsed.problem;
      throw new AppError('validation', message('eventInvalid', { field, reason }), { details: [{ field, reason }] });
    }
    const exposures: StoredExposure[] = [];
    const tracked: StoredTrackedEvent[] = [];
    const { environmentId } = environment;
    for (const e of parsed.events) {
      if (e.kind === 'exposure') exposures.push({ ...e, environmentId });
      else tracked.push({ ...e, environmentId });
    }
    await this.deps.writer.write({ exposures, tracked });
    return parsed.events.length;
  }

  /** Deletes events past FLAGPOST_EVENTS_RETENTION_DAYS (a round of the retention job); the rows deleted. */
  async prune(): Promise<number> {
    return this.deps.store.prune(this.deps.db, this.deps.clock().getTime() - this.deps.retentionDays * 86_400_000);
  }

  /** The events of a person, found by the targeting keys that are theirs (the personal-data export). */
  async findPerson(keys: readonly string[]): Promise<PersonEvents> {
    return this.deps.store.findPerson(this.deps.db, keys);
  }

  /** Deletes the events of a person (the personal-data erase); the rows deleted. */
  async erasePerson(keys: readonly string[]): Promise<number> {
    return this.deps.store.erasePerson(this.deps.db, keys);
  }
}
