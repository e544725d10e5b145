import type { SettingsStore } from '../admin/index.ts';
import type { Db } from '../db/database.ts';
import type { AccountStore } from './account.store.ts';
import type { AuditTrail } from './audit-trail.ts';
import type { ScryptCost } from './password.ts';

/** What the three account services are built from (openAccounts in account.service.ts); each takes its part. */
export interface AccountServiceDeps {
  db: Db;
  store: AccountStore;
  settings: SettingsStore;
  audit: AuditTrail;
  clock: () => Date;
  /** How long an invitation link stays valid. */
  invitationTtlMs: number;
  /** scrypt's cost for new password hashes (password.ts's default unless a test makes it cheap). */
  scryptCost?: ScryptCost;
}
