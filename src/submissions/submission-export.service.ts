import type { Db } from '../db/database.ts';
import { type Cursor, pageOf } from '../db/paging.ts';
import type { FormService } from '../forms/index.ts';
import { csvRow } from './csv.ts';
import type { Submission } from './submission.ts';
import type { SubmissionFilter, SubmissionStore } from './submission.store.ts';

export interface SubmissionExportServiceDeps {
  db: Db;
  store: SubmissionStore;
  forms: FormService;
}

/** Field columns of the CSV export, at most; further fields go, as JSON, into one `otherFields` column. */
export const CSV_FIELD_COLUMNS = 100;

/** A form's submissions as one download (CSV or JSON), written page by page. */
export class SubmissionExportService {
  constructor(private readonly deps: SubmissionExportServiceDeps) {}

  /**
   * Every submission of a form as CSV, newest first: id, createdAt, spam, one column per field name (in
   * order of first appearance; not the honeypot's) and the file names. Cells are safe against formula injection.
   */
  async exportCsv(formKey: string, filter: SubmissionFilter): Promise<AsyncIterable<string>> {
    const form = await this.deps.forms.get(formKey);
    const pages = this.pages.bind(this, form.id, filter);
    const honeypot = form.honeypot;
    // Two passes, page by page, so that memory holds one page and not the whole export: the first
    // collects the column names, the second writes the rows.
    return (async function* () {
      // At most CSV_FIELD_COLUMNS columns: distinct names times rows would make a CSV quadratic in
      // the number of names (issue 8); the rest of a row's fields go into `otherFields` as JSON.
      const fields = new Set<string>();
      let overflow = false;
      for await (const page of pages()) {
        for (const s of page) {
          for (const name of Object.keys(s.data)) {
            // The honeypot's trap field is no answer of a person: it stays out of the columns (issue 31 item 15).
            if (name === honeypot) continue;
            if (fields.size < CSV_FIELD_COLUMNS) fields.add(name);
            else if (!fields.has(name)) overflow = true;
          }
        }
      }
      const columns = [...fields];
      yield csvRow(['id', 'createdAt', 'spam', ...columns, ...(overflow ? ['otherFields'] : []), 'files']);
      for await (const page of pages()) {
        let chunk = '';
        for (const s of page) {
          // Own fields only: a field named "toString" must not read Object.prototype.toString.
          const cells = columns.map((name) => (Object.hasOwn(s.data, name) ? s.data[name] : undefined));
          const other = overflow ? [Object.fromEntries(Object.entries(s.data).filter(([name]) => !fields.has(name) && name !== honeypot))] : [];
          const otherCell = other.length > 0 && Object.keys(other[0]!).length === 0 ? [''] : other;
          chunk += csvRow([s.id, s.createdAt, String(s.spam), ...cells, ...otherCell, s.files.map((f) => `${f.field}: ${f.name}`).join('; ')]);
        }
        yield chunk;
      }
    })();
  }

  /**
   * Every submission of a form as one JSON array, newest first, written page by page (issue 12): each
   * with its fields, request metadata and files (described; their bytes stay behind the file route).
   */
  async exportJson(formKey: string, filter: SubmissionFilter): Promise<AsyncIterable<string>> {
    const form = await this.deps.forms.get(formKey);
    const pages = this.pages.bind(this, form.id, filter);
    return (async function* () {
      let first = true;
      yield '[';
      for await (const page of pages()) {
        let chunk = '';
        for (const s of page) {
          chunk += `${first ? '\n' : ',\n'}${JSON.stringify({ id: s.id, createdAt: s.createdAt, spam: s.spam, data: s.data, files: s.files, meta: s.meta })}`;
          first = false;
        }
        yield chunk;
      }
      yield first ? ']\n' : '\n]\n';
    })();
  }

  private async *pages(formId: string, filter: SubmissionFilter): AsyncGenerator<Submission[]> {
    const size = 100;
    let after: Cursor | undefined;
    for (;;) {
      const { items, next } = pageOf(await this.deps.store.list(this.deps.db, formId, size, after, filter), size);
      if (items.length > 0) yield items;
      if (!next) return;
      after = next;
    }
  }
}
