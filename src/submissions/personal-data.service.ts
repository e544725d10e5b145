import type { Actor, AuditLog } from '../audit/index.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { FileStorage, ObjectLocation } from '../files/index.ts';
import type { FormService } from '../forms/index.ts';
import { addressFingerprint, personMatcher } from './person-match.ts';
import type { Submission } from './submission.ts';
import type { SubmissionStore } from './submission.store.ts';

export interface PersonalDataServiceDeps {
  db: Db;
  store: SubmissionStore;
  forms: FormService;
  audit: Pick<AuditLog, 'record'>;
  files: FileStorage;
}

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

  /** An access request: a person's submissions (ofPerson), recorded in the audit log as answered. */
  async exportPerson(email: string, actor: Actor): Promise<PersonSubmission[]> {
    const found = await this.ofPerson(email);
    await this.deps.audit.record(this.deps.db, actor, {
      entity: 'personal_data',
      entityId: addressFingerprint(email),
      action: 'personal_data.exported',
      changes: { submissions: { after: found.map((s) => s.id) } },
    });
    return found;
  }

  /** Deletes a person's submissions across every form, with their files and deliveries; returns their ids. */
  async erasePerson(email: string, actor: Actor): Promise<string[]> {
    const ids = (await this.ofPerson(email)).map((s) => s.id);
    let objects: ObjectLocation[] = [];
    // The log outlives the erasure: it keeps the address's fingerprint, not the address (ADR 0023).
    await this.deps.db.transaction().execute(async (trx) => {
      objects = await this.deps.store.objectsOf(trx, ids);
      await this.deps.files.forget(trx, objects);
      await this.deps.store.deleteMany(trx, ids);
      await this.deps.audit.record(trx, actor, {
        entity: 'personal_data',
        entityId: addressFingerprint(email),
        action: 'personal_data.erased',
        changes: { submissions: { before: ids } },
      });
    });
    await this.deps.files.purge(objects);
    return ids;
  }
}
