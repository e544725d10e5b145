import { CompiledQuery, type Expression, PostgresAdapter, type Selectable, type SqlBool, sql } from 'kysely';
import { fromBool, fromJson, isForeignKeyViolation, toBool } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { type Cursor, newestFirst, oldestFirst } from '../db/paging.ts';
import { AppError, message } from '../errors.ts';
import type { FileLocation, FileStorageKind, ObjectLocation, ObjectStorageKind } from '../files/index.ts';
import { fts5Match, queryWords, searchText, tsQuery } from './search-text.ts';
import type { IncomingFile, SpamReason, StoredFile, Submission } from './submission.ts';
import type { SubmissionFilesTable, SubmissionsTable } from './submission.table.ts';

const FILE_COLUMNS = ['id', 'submission_id', 'field', 'name', 'size', 'content_type'] as const;

/** Every column of a submission row but PostgreSQL's `search` tsvector, which no read needs (never `select *`). */
const SUBMISSION_COLUMNS = [
  'id',
  'form_id',
  'data',
  'spam',
  'ip',
  'user_agent',
  'referer',
  'origin',
  'created_at',
  'spam_reasons',
  'fingerprint',
  'webdriver',
] as const;

const onPostgres = (db: Executor): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

type FileRow = Pick<Selectable<SubmissionFilesTable>, (typeof FILE_COLUMNS)[number]>;

const toFile = (row: FileRow): StoredFile => ({
  id: row.id,
  field: row.field,
  name: row.name,
  size: Number(row.size),
  contentType: row.content_type,
});

type SubmissionRow = Pick<Selectable<SubmissionsTable>, (typeof SUBMISSION_COLUMNS)[number]>;

const toSubmission = (row: SubmissionRow, files: StoredFile[]): Submission => ({
  id: row.id,
  formId: row.form_id,
  data: fromJson<Record<string, unknown>>(row.data) ?? {},
  files,
  spam: toBool(row.spam),
  spamReasons: fromJson<SpamReason[]>(row.spam_reasons) ?? [],
  fingerprint: row.fingerprint,
  meta: { ip: row.ip, userAgent: row.user_agent, referer: row.referer, origin: row.origin, webdriver: row.webdriver === null ? null : toBool(row.webdriver) },
  createdAt: row.created_at,
});

/** The columns of a file row that say where its bytes are. */
function columnsOf(location: FileLocation): { storage: string; object_key: string | null; content: Buffer } {
  return location.storage === 'db'
    ? { storage: 'db', object_key: null, content: location.content }
    : { storage: location.storage, object_key: location.key, content: Buffer.alloc(0) };
}

function locationOf(row: { storage: string; object_key: string | null; content: Buffer | null }): FileLocation {
  if (row.storage === 'db') return { storage: 'db', content: Buffer.from(row.content ?? Buffer.alloc(0)) };
  return { storage: row.storage as ObjectStorageKind, key: row.object_key! };
}

export interface SubmissionFilter {
  /** undefined: spam and not spam. */
  spam?: boolean;
  /** Only spam that this check called spam (`duplicate`, `rule`, ...: a `check` of its spamReasons). */
  spamCheck?: string;
  /** Only submissions received at or after this time (ISO-8601, as stored). */
  since?: string;
  /** Only submissions received before this time (ISO-8601, as stored). */
  until?: string;
  /** Field name to value: only submissions where that field holds the value (as text; any value of a repeated field). All must match. */
  fields?: ReadonlyArray<readonly [string, string]>;
  /** Full text: only submissions whose field values hold every word of it (search-text.ts). */
  q?: string;
  /** `desc` (newest first) unless `asc`. */
  order?: 'asc' | 'desc';
}

/** The SQL of `recentActivity`, by dialect and shape (how many rate-limit scopes, whether the duplicate check asks). */
const activityQueries = new Map<string, string>();

export class SubmissionStore {
  /**
   * Writes a submission with its files; `trx` is the submission's transaction (contract D18). A form
   * deleted in the meantime is the form interface's 404 (`formKey` names it).
   */
  async insert(trx: Executor, submission: Submission, contents: IncomingFile[], formKey: string): Promise<void> {
    try {
      await this.insertRows(trx, submission, contents);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new AppError('not_found', message('formNotFound', { formKey }));
      throw error;
    }
  }

  private async insertRows(trx: Executor, submission: Submission, contents: IncomingFile[]): Promise<void> {
    await trx
      .insertInto('submissions')
      .values({
        id: submission.id,
        form_id: submission.formId,
        data: JSON.stringify(submission.data),
        spam: fromBool(submission.spam),
        ip: submission.meta.ip,
        user_agent: submission.meta.userAgent,
        referer: submission.meta.referer,
        origin: submission.meta.origin,
        webdriver: submission.meta.webdriver === undefined || submission.meta.webdriver === null ? null : fromBool(submission.meta.webdriver),
        spam_reasons: submission.spamReasons && submission.spamReasons.length > 0 ? JSON.stringify(submission.spamReasons) : null,
        fingerprint: submission.fingerprint ?? null,
        created_at: submission.createdAt,
      })
      .execute();
    await this.index(trx, submission);
    for (const [position, file] of submission.files.entries()) {
      await trx
        .insertInto('submission_files')
        .values({
          id: file.id,
          submission_id: submission.id,
          position,
          field: file.field,
          name: file.name,
          content_type: file.contentType,
          size: file.size,
          ...columnsOf(contents[position]!.received.location),
        })
        .execute();
    }
  }

  /**
   * Makes a new submission findable by its field values (migration 0028): PostgreSQL keeps the words in
   * the row; SQLite in its FTS5 table, whose row a trigger deletes with the submission.
   */
  private async index(trx: Executor, submission: Submission): Promise<void> {
    const text = searchText(submission.data);
    if (onPostgres(trx)) {
      await sql`update submissions set search = to_tsvector('simple', ${text}) where id = ${submission.id}`.execute(trx);
      return;
    }
    const row = await trx.insertInto('submission_search_rows').values({ submission_id: submission.id }).returning('id').executeTakeFirstOrThrow();
    await sql`insert into submission_search (rowid, body) values (${row.id}, ${text})`.execute(trx);
  }

  /** The condition that a submission's field values hold every word of `q`; undefined when `q` has none (it then finds nothing). */
  private matches(db: Executor, q: string): Expression<SqlBool> | undefined {
    const words = queryWords(q);
    if (words.length === 0) return undefined;
    if (onPostgres(db)) return sql<SqlBool>`search @@ to_tsquery('simple', ${tsQuery(words)})`;
    return sql<SqlBool>`id in (select r.submission_id from submission_search_rows r where r.id in (select rowid from submission_search where submission_search match ${fts5Match(words)}))`;
  }

  /** The condition that field `name` holds `value`: a string as it is, a number or boolean as JSON writes it, or any element of a list. */
  private fieldEquals(db: Executor, name: string, value: string): Expression<SqlBool> {
    if (onPostgres(db)) {
      return sql<SqlBool>`exists (select 1 from jsonb_array_elements(case when jsonb_typeof(data::jsonb -> ${name}) = 'array' then data::jsonb -> ${name} else jsonb_build_array(data::jsonb -> ${name}) end) e where e #>> '{}' = ${value})`;
    }
    // json_each over a path to a scalar yields that scalar as its one row; true and false read as their type's name.
    const path = `$."${name}"`;
    return sql<SqlBool>`exists (select 1 from json_each(data, ${path}) e where (case when e.type in ('true', 'false') then e.type else cast(e.value as text) end) = ${value})`;
  }

  /**
   * Up to `limit + 1` submissions, newest first (oldest first with `order: 'asc'`), strictly after
   * `after` (db/paging.ts); file metadata only, never contents. The filters narrow the rows before they
   * are ordered and cut, so a cursor names the same place whichever filters came with it.
   */
  async list(db: Executor, formId: string, limit: number, after: Cursor | undefined, filter: SubmissionFilter): Promise<Submission[]> {
    let query = db.selectFrom('submissions').select(SUBMISSION_COLUMNS).where('form_id', '=', formId);
    if (filter.spam !== undefined) query = query.where('spam', '=', fromBool(filter.spam));
    // spamReasons is JSON written by Flagpost alone (`[{"check":"...","detail":"..."}]`); check names are plain words.
    if (filter.spamCheck !== undefined)
      query = query.where('spam', '=', 1).where('spam_reasons', 'like', `%"check":"${filter.spamCheck.replace(/[^A-Za-z]/g, '')}"%`);
    if (filter.since !== undefined) query = query.where('created_at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('created_at', '<', filter.until);
    for (const [name, value] of filter.fields ?? []) query = query.where(this.fieldEquals(db, name, value));
    if (filter.q !== undefined) {
      const matches = this.matches(db, filter.q);
      if (!matches) return [];
      query = query.where(matches);
    }
    const paged = filter.order === 'asc' ? oldestFirst(query, limit, after) : newestFirst(query, limit, after);
    return this.withFiles(db, await paged.execute());
  }

  /**
   * What the spam checks that count earlier submissions need, in one statement: for each rate-limit scope
   * ('' for the whole form, else the sender's address) the submissions counted in the seconds after
   * `afterSecond` (migration 0034: a sum over at most one row per second), and, when `duplicateOf` is
   * given, whether a submission with that fingerprint arrived since its `sinceIso`.
   */
  async recentActivity(
    db: Executor,
    formId: string,
    ask: { scopes: readonly string[]; afterSecond: number; duplicateOf?: { fingerprint: string; sinceIso: string } },
  ): Promise<{ counts: number[]; duplicate: boolean }> {
    const dup = ask.duplicateOf;
    if (ask.scopes.length === 0 && !dup) return { counts: [], duplicate: false };
    const parameters: unknown[] = [];
    for (const scope of ask.scopes) parameters.push(formId, scope, ask.afterSecond);
    if (dup) parameters.push(formId, dup.fingerprint, dup.sinceIso);
    // Every submission of a checked form asks this: its SQL is built once per shape and dialect.
    const shape = `${db.getExecutor().adapter instanceof PostgresAdapter ? 'pg' : 'sqlite'} ${ask.scopes.length} ${dup ? 1 : 0}`;
    let text = activityQueries.get(shape);
    if (text === undefined) {
      const columns = ask.scopes.map(
        (scope, i) =>
          sql`(select coalesce(sum(n), 0) from form_rate_counts where form_id = ${formId} and scope = ${scope} and second > ${ask.afterSecond}) as ${sql.ref(`c${i}`)}`,
      );
      if (dup)
        columns.push(
          sql`(select count(*) from (select 1 from submissions where form_id = ${formId} and fingerprint = ${dup.fingerprint} and created_at >= ${dup.sinceIso} limit 1) as d) as dup`,
        );
      const compiled = sql`select ${sql.join(columns)}`.compile(db);
      if (compiled.parameters.length !== parameters.length) throw new Error('recentActivity: the parameters do not match the statement');
      activityQueries.set(shape, (text = compiled.sql));
    }
    const { rows } = await db.executeQuery<Record<string, string | number>>(CompiledQuery.raw(text, parameters));
    const row = rows[0]!;
    return { counts: ask.scopes.map((_, i) => Number(row[`c${i}`])), duplicate: dup !== undefined && Number(row.dup) > 0 };
  }

  /** Runs in the caller's transaction: adds to the rate limit's counts (one row per form, scope and second). */
  async addRateCounts(trx: Executor, rows: ReadonlyArray<{ formId: string; scope: string; second: number; n: number }>): Promise<void> {
    if (rows.length === 0) return;
    await trx
      .insertInto('form_rate_counts')
      .values(rows.map((r) => ({ form_id: r.formId, scope: r.scope, second: r.second, n: r.n })))
      .onConflict((oc) => oc.columns(['form_id', 'scope', 'second']).doUpdateSet({ n: sql`form_rate_counts.n + excluded.n` }))
      .execute();
  }

  /** Deletes the rate limit's counts of seconds before `beforeSecond` (the retention job); answers how many rows went. */
  async pruneRateCounts(db: Executor, beforeSecond: number): Promise<number> {
    const result = await db.deleteFrom('form_rate_counts').where('second', '<', beforeSecond).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The newest `limit` submissions of a form, without their files (the spam rules' dry run). */
  async newest(db: Executor, formId: string, limit: number): Promise<Submission[]> {
    const rows = await db
      .selectFrom('submissions')
      .select(SUBMISSION_COLUMNS)
      .where('form_id', '=', formId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => toSubmission(row, []));
  }

  /** Sets a submission's spam verdict and its reasons (a reviewer's "not spam" clears them). */
  async setSpamReasons(db: Executor, formId: string, id: string, reasons: readonly SpamReason[]): Promise<void> {
    await db
      .updateTable('submissions')
      .set({ spam_reasons: reasons.length > 0 ? JSON.stringify(reasons) : null })
      .where('form_id', '=', formId)
      .where('id', '=', id)
      .execute();
  }

  /** Records a used proof-of-work solution; false when it was used before (a replay). Expired records go. */
  async useProofOfWork(db: Executor, signature: string, expiresAt: string, nowIso: string): Promise<boolean> {
    await db.deleteFrom('form_pow_solutions').where('expires_at', '<', nowIso).execute();
    const result = await db
      .insertInto('form_pow_solutions')
      .values({ signature, expires_at: expiresAt })
      .onConflict((oc) => oc.column('signature').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async find(db: Executor, formId: string, id: string): Promise<Submission | undefined> {
    const row = await db.selectFrom('submissions').select(SUBMISSION_COLUMNS).where('form_id', '=', formId).where('id', '=', id).executeTakeFirst();
    return row ? (await this.withFiles(db, [row]))[0] : undefined;
  }

  /** A file with where its bytes are: inline ones are read here, objects are named. */
  async findFile(db: Executor, submissionId: string, fileId: string): Promise<{ file: StoredFile; location: FileLocation } | undefined> {
    const row = await db
      .selectFrom('submission_files')
      .select([...FILE_COLUMNS, 'storage', 'object_key', (eb) => eb.case().when('storage', '=', 'db').then(eb.ref('content')).else(null).end().as('content')])
      .where('submission_id', '=', submissionId)
      .where('id', '=', fileId)
      .executeTakeFirst();
    return row ? { file: toFile(row), location: locationOf(row) } : undefined;
  }

  /** The objects of these submissions' files (inline files have none), to forget with them. */
  async objectsOf(db: Executor, submissionIds: readonly string[]): Promise<ObjectLocation[]> {
    const objects: ObjectLocation[] = [];
    for (let i = 0; i < submissionIds.length; i += 500) {
      const rows = await db
        .selectFrom('submission_files')
        .select(['storage', 'object_key'])
        .where('submission_id', 'in', submissionIds.slice(i, i + 500))
        .where('object_key', 'is not', null)
        .execute();
      objects.push(...rows.map((r) => ({ storage: r.storage as ObjectStorageKind, key: r.object_key! })));
    }
    return objects;
  }

  /** The objects of every file of a form (about to be deleted with it). */
  async objectsOfForm(db: Executor, formId: string): Promise<ObjectLocation[]> {
    const rows = await db
      .selectFrom('submission_files')
      .innerJoin('submissions', 'submissions.id', 'submission_files.submission_id')
      .select(['submission_files.storage', 'submission_files.object_key'])
      .where('submissions.form_id', '=', formId)
      .where('submission_files.object_key', 'is not', null)
      .execute();
    return rows.map((r) => ({ storage: r.storage as ObjectStorageKind, key: r.object_key! }));
  }

  /** Which of these object keys file rows point at. */
  async referencedKeys(db: Executor, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < keys.length; i += 500) {
      const rows = await db
        .selectFrom('submission_files')
        .select('object_key')
        .where('object_key', 'in', keys.slice(i, i + 500))
        .execute();
      for (const row of rows) found.add(row.object_key!);
    }
    return found;
  }

  /** Up to `limit` files not in `storage`, by id after `afterId` (migrate-files), without their bytes. */
  async filesNotIn(
    db: Executor,
    storage: FileStorageKind,
    afterId: string | undefined,
    limit: number,
  ): Promise<Array<{ id: string; contentType: string; storage: FileStorageKind; objectKey: string | null }>> {
    let query = db
      .selectFrom('submission_files')
      .select(['id', 'content_type', 'storage', 'object_key'])
      .where('storage', '<>', storage)
      .orderBy('id')
      .limit(limit);
    if (afterId) query = query.where('id', '>', afterId);
    const rows = await query.execute();
    return rows.map((r) => ({ id: r.id, contentType: r.content_type, storage: r.storage as FileStorageKind, objectKey: r.object_key }));
  }

  /** The bytes of an inline file. */
  async inlineContent(db: Executor, fileId: string): Promise<Buffer | undefined> {
    const row = await db.selectFrom('submission_files').select('content').where('id', '=', fileId).where('storage', '=', 'db').executeTakeFirst();
    return row ? Buffer.from(row.content) : undefined;
  }

  /** Points a file at its new place, only if it is still where `from` says; false when it moved or went meanwhile. */
  async moveFile(db: Executor, fileId: string, from: FileStorageKind, to: FileLocation): Promise<boolean> {
    const result = await db
      .updateTable('submission_files')
      .set({
        storage: to.storage,
        object_key: to.storage === 'db' ? null : to.key,
        content: to.storage === 'db' ? to.content : Buffer.alloc(0),
      })
      .where('id', '=', fileId)
      .where('storage', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes a submission; its files and deliveries go with it (foreign keys cascade). */
  async delete(db: Executor, formId: string, id: string): Promise<boolean> {
    const result = await db.deleteFrom('submissions').where('form_id', '=', formId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Marks a submission as spam or not; false when the form has no submission with this id. */
  async setSpam(db: Executor, formId: string, id: string, spam: boolean): Promise<boolean> {
    const result = await db
      .updateTable('submissions')
      .set({ spam: spam ? 1 : 0 })
      .where('form_id', '=', formId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Submissions per form id, all and spam, for the forms given. */
  async countsOf(db: Executor, formIds: readonly string[]): Promise<Map<string, { total: number; spam: number }>> {
    const counts = new Map<string, { total: number; spam: number }>();
    if (formIds.length === 0) return counts;
    const rows = await db
      .selectFrom('submissions')
      .select((eb) => ['form_id', eb.fn.countAll<string | number>().as('total'), eb.fn.sum<string | number | null>('spam').as('spam')])
      .where('form_id', 'in', formIds)
      .groupBy('form_id')
      .execute();
    for (const row of rows) counts.set(row.form_id, { total: Number(row.total), spam: Number(row.spam ?? 0) });
    return counts;
  }

  /**
   * Submissions of every form whose lower-cased field text matches the LIKE `pattern` (escape character
   * `\\`), a page of `limit` after `afterId`, oldest id first: a coarse filter in SQL; the caller checks
   * each match exactly.
   */
  async findLike(db: Executor, pattern: string, limit: number, afterId: string | undefined): Promise<Submission[]> {
    let query = db
      .selectFrom('submissions')
      .select(SUBMISSION_COLUMNS)
      .where(sql<boolean>`lower(data) like ${pattern} escape '\\'`)
      .orderBy('id')
      .limit(limit);
    if (afterId) query = query.where('id', '>', afterId);
    return this.withFiles(db, await query.execute());
  }

  /** Up to `limit` submissions of a form created before `cutoff`, oldest first. */
  async idsOlderThan(db: Executor, formId: string, cutoff: string, limit: number): Promise<string[]> {
    const ids = await db
      .selectFrom('submissions')
      .select('id')
      .where('form_id', '=', formId)
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return ids.map((r) => r.id);
  }

  /**
   * Up to `limit` submissions of a form that have files and whose deliveries all succeeded (at least
   * one): the delivery records live in the outbox, which points at submissions.
   */
  async idsWithDeliveredFiles(db: Executor, formId: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('submissions')
      .select('submissions.id')
      .where('submissions.form_id', '=', formId)
      .where((eb) =>
        eb.exists(eb.selectFrom('submission_files').select('submission_files.id').whereRef('submission_files.submission_id', '=', 'submissions.id')),
      )
      .where((eb) => eb.exists(eb.selectFrom('outbox').select('outbox.id').whereRef('outbox.submission_id', '=', 'submissions.id')))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb.selectFrom('outbox').select('outbox.id').whereRef('outbox.submission_id', '=', 'submissions.id').where('outbox.status', '<>', 'delivered'),
          ),
        ),
      )
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Deletes the files of these submissions (not the submissions). */
  async deleteFilesOf(db: Executor, submissionIds: readonly string[]): Promise<void> {
    for (let i = 0; i < submissionIds.length; i += 500) {
      await db
        .deleteFrom('submission_files')
        .where('submission_id', 'in', submissionIds.slice(i, i + 500))
        .execute();
    }
  }

  /** Deletes these submissions (files and deliveries cascade); returns how many went. */
  async deleteMany(db: Executor, ids: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const result = await db
        .deleteFrom('submissions')
        .where('id', 'in', ids.slice(i, i + 500))
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
    return deleted;
  }

  private async withFiles(db: Executor, rows: SubmissionRow[]): Promise<Submission[]> {
    if (rows.length === 0) return [];
    const files = await db
      .selectFrom('submission_files')
      .select(FILE_COLUMNS)
      .where(
        'submission_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('submission_id')
      .orderBy('position')
      .execute();
    return rows.map((row) => toSubmission(row, files.filter((f) => f.submission_id === row.id).map(toFile)));
  }
}
