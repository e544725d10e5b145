import type { Logger } from 'pino';
import type { SettingsStore } from '../admin/index.ts';
import type { AuditLog } from '../audit/index.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DbHandle } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import type { DomainEvents } from '../events/index.ts';
import type { ProjectService } from '../projects/index.ts';
import type { Ports } from './services.ts';

/**
 * What every part of the composition (src/compose/*.ts) is built on: the settings, the database, the
 * ports, and the few services almost every capability takes (the event bus, the audit log, projects).
 */
export interface Composition {
  readonly config: Config;
  readonly handle: DbHandle;
  readonly db: Db;
  readonly ports: Partial<Ports>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: DomainEvents;
  readonly audit: AuditLog;
  readonly projects: ProjectService;
  readonly settings: SettingsStore;
}
