import type { Kysely } from 'kysely';
import type { AccessTokensTable, InvitationsTable, UsersTable } from '../identity/account.table.ts';
import type { ThrottlesTable } from '../identity/throttle.table.ts';
import type { ApiKeysTable } from '../api-keys/api-key.table.ts';
import type { AuditLogTable } from '../audit/audit.table.ts';
import type {
  ChangeApprovalsTable,
  ChangeCommentsTable,
  ChangeItemsTable,
  ChangeNotificationsTable,
  ChangeRequestRevisionsTable,
  ChangeRequestsTable,
} from '../changes/change.table.ts';
import type { CodeRefRemovalsTable, CodeRefsTable } from '../code-refs/code-ref.table.ts';
import type { ExperimentUsersTable, ExposuresTable, TrackedEventsTable } from '../experiments/event.table.ts';
import type { ExperimentsTable } from '../experiments/experiment.table.ts';
import type { ReleaseNotificationsTable, ReleaseReadingsTable, ReleasesTable, ReleaseTemplatesTable } from '../releases/release.table.ts';
import type { MetricsTable } from '../experiments/metric.table.ts';
import type { FeedbackTable } from '../feedback/feedback.table.ts';
import type { FileObjectsTable } from '../files/file-object.table.ts';
import type { FlagdSyncTokensTable } from '../flagd-sync/flagd-sync.table.ts';
import type { FlagsTable } from '../flags/flag.table.ts';
import type { FlagUsageTable } from '../usage/flag-usage.table.ts';
import type { FormsTable, FormViewCountsTable } from '../forms/form.table.ts';
import type { FormReadTokensTable } from '../forms/read-token.table.ts';
import type { DeliveryAttemptsTable, OutboxTable } from '../submissions/outbox.table.ts';
import type { EnvironmentsTable, ProjectsTable } from '../projects/project.table.ts';
import type { SegmentsTable } from '../segments/segment.table.ts';
import type { ProjectRolesTable } from '../identity/project-role.table.ts';
import type { SessionsTable } from '../identity/session.table.ts';
import type { SsoLoginsTable, UserIdentitiesTable } from '../identity/sso.table.ts';
import type {
  FormPowSolutionsTable,
  FormRateCountsTable,
  SubmissionFilesTable,
  SubmissionSearchRowsTable,
  SubmissionsTable,
} from '../submissions/submission.table.ts';
import type { ProjectWebhookAttemptsTable, ProjectWebhookDeliveriesTable, ProjectWebhooksTable } from '../webhooks/webhook.table.ts';
import type { SettingsTable } from './settings.table.ts';

export interface Database {
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  flags: FlagsTable;
  api_keys: ApiKeysTable;
  feedback: FeedbackTable;
  code_refs: CodeRefsTable;
  code_ref_removals: CodeRefRemovalsTable;
  settings: SettingsTable;
  forms: FormsTable;
  submissions: SubmissionsTable;
  submission_files: SubmissionFilesTable;
  form_pow_solutions: FormPowSolutionsTable;
  form_rate_counts: FormRateCountsTable;
  submission_search_rows: SubmissionSearchRowsTable;
  form_read_tokens: FormReadTokensTable;
  form_view_counts: FormViewCountsTable;
  outbox: OutboxTable;
  delivery_attempts: DeliveryAttemptsTable;
  sessions: SessionsTable;
  audit_log: AuditLogTable;
  users: UsersTable;
  invitations: InvitationsTable;
  access_tokens: AccessTokensTable;
  throttles: ThrottlesTable;
  segments: SegmentsTable;
  flagd_sync_tokens: FlagdSyncTokensTable;
  file_objects: FileObjectsTable;
  flag_usage: FlagUsageTable;
  change_requests: ChangeRequestsTable;
  change_items: ChangeItemsTable;
  change_approvals: ChangeApprovalsTable;
  change_request_revisions: ChangeRequestRevisionsTable;
  change_comments: ChangeCommentsTable;
  change_notifications: ChangeNotificationsTable;
  user_identities: UserIdentitiesTable;
  sso_logins: SsoLoginsTable;
  project_roles: ProjectRolesTable;
  project_webhooks: ProjectWebhooksTable;
  project_webhook_deliveries: ProjectWebhookDeliveriesTable;
  project_webhook_attempts: ProjectWebhookAttemptsTable;
  exposures: ExposuresTable;
  tracked_events: TrackedEventsTable;
  metrics: MetricsTable;
  experiments: ExperimentsTable;
  experiment_users: ExperimentUsersTable;
  releases: ReleasesTable;
  release_templates: ReleaseTemplatesTable;
  release_readings: ReleaseReadingsTable;
  release_notifications: ReleaseNotificationsTable;
}

export type Dialect = 'sqlite' | 'postgres';

/** The database of one process, as opened by connect.ts. */
export type Db = Kysely<Database>;

/**
 * What a store method runs its statements on: the database or a transaction of it (a Kysely
 * Transaction is a Kysely). Every store method takes it as its first argument, so the caller decides
 * which transaction a statement belongs to.
 */
export type Executor = Kysely<Database>;
