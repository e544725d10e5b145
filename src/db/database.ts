import type { Kysely } from 'kysely';
import type { ApiKeysTable } from '../api-keys/api-key.table.ts';
import type { CodeRefsTable } from '../code-refs/code-ref.table.ts';
import type { FeedbackTable } from '../feedback/feedback.table.ts';
import type { FlagsTable } from '../flags/flag.table.ts';
import type { FormsTable, SubmissionFilesTable, SubmissionsTable } from '../forms/form.table.ts';
import type { DeliveryAttemptsTable, OutboxTable } from '../outbox/outbox.table.ts';
import type { EnvironmentsTable, ProjectsTable } from '../projects/project.table.ts';
import type { SettingsTable } from './settings.table.ts';

export interface Database {
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  flags: FlagsTable;
  api_keys: ApiKeysTable;
  feedback: FeedbackTable;
  code_refs: CodeRefsTable;
  settings: SettingsTable;
  forms: FormsTable;
  submissions: SubmissionsTable;
  submission_files: SubmissionFilesTable;
  outbox: OutboxTable;
  delivery_attempts: DeliveryAttemptsTable;
}

export type Dialect = 'sqlite' | 'postgres';

export type Db = Kysely<Database>;
