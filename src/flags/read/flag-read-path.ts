import type { Db, Dialect } from '../../db/database.ts';
import type { OutageLog } from '../../db/outage.ts';
import type { DomainEvents } from '../../events/index.ts';
import type { ProjectService } from '../../projects/index.ts';
import type { FlagStore } from '../flag.store.ts';
import type { FlagChanges } from './flag-changes.ts';
import { FlagReadModel } from './flag.read-model.ts';
import { LocalFlagChanges } from './local-flag-changes.ts';
import { PgFlagChanges } from './pg-flag-changes.ts';

export interface FlagReadPathDeps {
  db: Db;
  dialect: Dialect;
  /** The PostgreSQL connection string, for the LISTEN connection; undefined on SQLite. */
  databaseUrl: string | undefined;
  projects: ProjectService;
  store: FlagStore;
  events: DomainEvents;
  log: OutageLog;
}

export interface FlagReadPath {
  readonly reads: FlagReadModel;
  /** How changes reach this instance's read model, and the other instances' on PostgreSQL. */
  readonly changes: FlagChanges;
}

/**
 * The client read path: the read model, fed by the committed domain events of admin writes. Several
 * instances share PostgreSQL, so there changes also travel to the others by LISTEN/NOTIFY.
 */
export async function openFlagReadPath(deps: FlagReadPathDeps): Promise<FlagReadPath> {
  const { db, store, projects, events } = deps;
  const reads = new FlagReadModel({
    async loadEnvironment(projectKey, environmentKey) {
      const env = await projects.findEnvironmentByKeys(projectKey, environmentKey);
      if (!env) return undefined;
      return { environmentId: env.id, flags: await store.listEnvironmentFlags(db, env.id) };
    },
  });
  let changes: FlagChanges;
  if (deps.dialect === 'postgres' && deps.databaseUrl) {
    const feed = new PgFlagChanges({ db, databaseUrl: deps.databaseUrl, reads, log: deps.log });
    await feed.start();
    changes = feed;
  } else {
    changes = new LocalFlagChanges(reads);
  }
  // New keys: remembered unknown key pairs may now be known.
  events.onCommit('project.created', () => changes.publish({ kind: 'keys' }));
  events.onCommit('environment.created', () => changes.publish({ kind: 'keys' }));
  const environmentsChanged = async (event: { environmentIds: string[] }) => {
    for (const environmentId of event.environmentIds) await changes.publish({ kind: 'environment', environmentId });
  };
  events.onCommit('flag.changed', environmentsChanged);
  events.onCommit('flag.deleted', environmentsChanged);
  return { reads, changes };
}
