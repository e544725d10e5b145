import { createHash } from 'node:crypto';
import type { Actor, AuditLog } from '../audit/index.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { FileStorage, ObjectLocation } from '../files/index.ts';
import type { FormService } from '../forms/index.ts';
import { addressFingerprint, personMatcher } from './person-match.ts';
import type { Submission } from './submission.ts';
import type { SubmissionStore } from './submission.store.ts';

/** A person's experiment events (issue 32), found by the targeting keys that are theirs; answered by experiments/' EventService. */
export interface PersonEventsPort {
  findPerson(keys: readonly string[]): Promise<PersonEventsFound>;
  erasePerson(keys: readonly string[]): Promise<number>;
}

export interface PersonEventsFound {
  exposures: Array<{ environmentId: string; flagKey: string; variant: string; timestamp: string }>;
  tracked: Array<{ environmentId: string; name: string; value: number | null; attributes: Record<string, unknown> | null; timestamp: string }>;
}

export interface PersonalDataServiceDeps {
  db: Db;
  store: SubmissionStore;
  forms: FormService;
  audit: Pick<AuditLog, 'record'>;
  files: FileStorage;
  events: PersonEventsPort;
}

/** Who an access or erasure request is about: an e-mail address, or a targeting key that is not one. */
export type Person = { email: string } | { targetingKey: string };

/**
 * The targeting keys of a person: a targeting key as given; an address as given and in lower case (SDKs
 * send addresses as the application holds them, most often in lower case).
 */
export function targetingKeysOf(person: Person): string[] {
  if ('targetingKey' in person) return [person.targetingKey];
  const email = person.email.trim();
  return [...new Set([email, email.toLowerCase()])];
}

const fingerprintOf = (person: Person) =>
  'email' in person ? addressFingerprint(person.email) : `sha256:${createHash('sha256').update(person.targetingKey, 'utf8').digest('hex')}`;

/** Submissions one access or erasure request may match, at most (a larger set is a mistake, not a person). */
const PERSON_MAX = 10_000;

export type PersonSubmission = Submission & { form: { key: string; name: string } };

/** Access and erasure requests (issue 12): one person's submissions across every form. */
export class PersonalDataService {
  constructor(private readonly deps: PersonalDataServiceDeps) {}

  /**
   * A person's submissions across every form: those whose field values hold the e-mail address as a
   * whole address, compared case-folded (person-match.ts).
   */
  async ofPerson(email: string): Promise<PersonSubmission[]> {
    const matcher = personMatcher(email);
    const found: Submission[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.deps.store.findLike(this.deps.db, matcher.likePattern, 200, after);
      found.push(...page.filter((s) => matcher.holds(s.data)));
      if (found.length > PERSON_MAX) throw AppError.validation([{ field: 'body.email', reason: `matches more than ${PERSON_MAX} submissions` }]);
      if (page.length < 200) break;
      after = page[page.length - 1]!.id;
    }
    const forms = new Map((await this.deps.forms.list()).map((f) => [f.id, { key: f.key, name: f.name }]));
    return found
      .filter((s) => forms.has(s.formId))
      .map((s) => ({ ...s, form: forms.get(s.formId)! }))
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** An access request: a person's submissions (ofPerson) and experiment events, recorded in the audit log as answered. */
  async exportPerson(person: Person, actor: Actor): Promise<{ submissions: PersonSubmission[]; events: PersonEventsFound }> {
    const found = 'email' in person ? await this.ofPerson(person.email) : [];
    const events = await this.deps.events.findPerson(targetingKeysOf(person));
    await this.deps.audit.record(this.deps.db, actor, {
      entity: 'personal_data',
      entityId: fingerprintOf(person),
      action: 'personal_data.exported',
      changes: { submissions: { after: found.map((s) => s.id) } },
    });
    return { submissions: found, events };
  }

  /**
   * Deletes a person's submissions across every form, with their files and deliveries, and their
   * experiment events (exposures, tracked events, experiment users); returns the submissions' ids and
   * the number of event rows deleted.
   */
  async erasePerson(person: Person, actor: Actor): Promise<{ submissionIds: string[]; eventsDeleted: number }> {
    const ids = 'email' in person ? (await this.ofPerson(person.email)).map((s) => s.id) : [];
    let objects: ObjectLocation[] = [];
    // The log outlives the erasure: it keeps the address's fingerprint, not the address (ADR 0023).
    await this.deps.db.transaction().execute(async (trx) => {
      objects = await this.deps.store.objectsOf(trx, ids);
      await this.deps.files.forget(trx, objects);
      await this.deps.store.deleteMany(trx, ids);
      await this.deps.audit.record(trx, actor, {
        entity: 'personal_data',
        entityId: fingerprintOf(person),
        action: 'personal_data.erased',
        changes: { submissions: { before: ids } },
      });
    });
    // The events are deleted on the event store's own connection, after the submissions (SQLite has one
    // connection: a write from inside this transaction would wait for it). A failure here answers 500
    // and a repeated request deletes the rest.
    const eventsDeleted = await this.deps.events.erasePerson(targetingKeysOf(person));
    await this.deps.files.purge(objects);
    return { submissionIds: ids, eventsDeleted };
  }
}
