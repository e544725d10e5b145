import type { Migration } from 'kysely';
import * as m0001 from './0001_flags.ts';
import * as m0002 from './0002_forms.ts';
import * as m0003 from './0003_outbox_form.ts';
import * as m0004 from './0004_sessions.ts';
import * as m0005 from './0005_form_captcha.ts';
import * as m0006 from './0006_form_chat_webhooks.ts';
import * as m0007 from './0007_form_retention.ts';
import * as m0008 from './0008_code_ref_removals.ts';
import * as m0009 from './0009_audit_log.ts';
import * as m0010 from './0010_accounts.ts';
import * as m0011 from './0011_signin_hardening.ts';
import * as m0012 from './0012_targeting.ts';
import * as m0013 from './0013_flagd_sync.ts';
import * as m0014 from './0014_file_storage.ts';
import * as m0015 from './0015_sso_project_roles.ts';
import * as m0016 from './0016_change_management.ts';
import * as m0017 from './0017_flag_usage.ts';
import * as m0018 from './0018_flag_tags_archive.ts';
import * as m0019 from './0019_project_webhooks.ts';
import * as m0020 from './0020_change_request_origin.ts';
import * as m0021 from './0021_change_request_revisions.ts';
import * as m0023 from './0023_experiment_events.ts';
import * as m0025 from './0025_releases.ts';
import * as m0026 from './0026_form_intake.ts';
import * as m0027 from './0027_form_mail.ts';
import * as m0028 from './0028_form_search_tokens_analytics.ts';
import * as m0033 from './0033_change_item_applied_before.ts';
import * as m0034 from './0034_form_rate_counts.ts';

/** Every migration, in order. Landed files are never edited; add a new one instead. */
export const migrations: Record<string, Migration> = {
  '0001_flags': m0001,
  '0002_forms': m0002,
  '0003_outbox_form': m0003,
  '0004_sessions': m0004,
  '0005_form_captcha': m0005,
  '0006_form_chat_webhooks': m0006,
  '0007_form_retention': m0007,
  '0008_code_ref_removals': m0008,
  '0009_audit_log': m0009,
  '0010_accounts': m0010,
  '0011_signin_hardening': m0011,
  '0012_targeting': m0012,
  '0013_flagd_sync': m0013,
  '0014_file_storage': m0014,
  '0015_sso_project_roles': m0015,
  '0016_change_management': m0016,
  '0017_flag_usage': m0017,
  '0018_flag_tags_archive': m0018,
  '0019_project_webhooks': m0019,
  '0020_change_request_origin': m0020,
  '0021_change_request_revisions': m0021,
  '0023_experiment_events': m0023,
  '0025_releases': m0025,
  '0026_form_intake': m0026,
  '0027_form_mail': m0027,
  '0028_form_search_tokens_analytics': m0028,
  '0033_change_item_applied_before': m0033,
  '0034_form_rate_counts': m0034,
};
