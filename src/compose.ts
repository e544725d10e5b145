import { SettingsStore, instanceSecret } from './admin/index.ts';
import { ApiKeyService, ApiKeyStore } from './api-keys/index.ts';
import { AuditLog, AuditStore } from './audit/index.ts';
import { systemClock } from './clock.ts';
import { CodeRefService, CodeRefStore } from './code-refs/index.ts';
import type { Config } from './config.ts';
import type { DbHandle } from './db/connect.ts';
import { NamedLocks } from './db/named-lock.ts';
import { allDeliveries, Scheduler } from './delivery/index.ts';
import { DomainEvents } from './events/index.ts';
import { FeedbackService, FeedbackStore } from './feedback/index.ts';
import { Readiness } from './http/health.ts';
import { createLogger } from './logger.ts';
import { Metrics } from './metrics/metrics.ts';
import { ProjectService, ProjectStore } from './projects/index.ts';
import { startTracing } from './tracing/tracing.ts';

import { composeChanges } from './compose/changes.ts';
import type { Composition } from './compose/context.ts';
import { composeExperiments } from './compose/experiments.ts';
import { openFileStorage } from './compose/files.ts';
import { composeFlags } from './compose/flags.ts';
import { composeDelivery, composeForms, composeSubmissions, composeWebhooks } from './compose/forms.ts';
import { composeIdentity } from './compose/identity.ts';
import { scheduleJobs } from './compose/jobs.ts';
import { composeReleases } from './compose/releases.ts';
import type { Ports, Services } from './compose/services.ts';

export type { Ports, Services } from './compose/services.ts';

/** The version traces name (package.json's; the bundle has no package.json beside it to read). */
const PACKAGE_VERSION = '0.1.0';

/**
 * The one place that wires stores, services and ports; used by main, the command-line tool and the
 * tests. Each room's part is built in src/compose/<part>.ts; capabilities coordinate through `events`
 * (docs/adr/0009-domain-events.md): each subscribes itself when built. It starts nothing:
 * `services.start()` starts the change feeds and the periodic jobs.
 */
export async function compose(config: Config, handle: DbHandle, ports: Partial<Ports> = {}): Promise<Services> {
  const clock = ports.clock ?? systemClock;
  const logger = ports.log ? { log: ports.log, dropped: () => 0, flush: async () => {} } : createLogger(config.logLevel);
  const { log } = logger;
  const { db } = handle;
  const events = new DomainEvents(log);
  const audit = new AuditLog({ db, store: new AuditStore(), clock, retentionDays: config.auditRetentionDays, events });
  const projects = new ProjectService({ db, store: new ProjectStore(), events, audit, clock });
  const c: Composition = { config, handle, db, ports, clock, log, events, audit, projects, settings: new SettingsStore() };

  const flagPart = await composeFlags(c);
  const { flags, reads, changes, streams, usage, flagdSyncServer } = flagPart;
  const experimentPart = composeExperiments(c, { reads, flags });
  const { trackedEvents } = experimentPart;
  const forms = composeForms(c);
  const { identity, createdAdminToken, formReadTokens } = await composeIdentity(c, { forms });
  const delivery = composeDelivery(c);
  // Releases before change requests, which carry release plans and start them when applied.
  const releasePart = composeReleases(c, {
    flags,
    reads,
    exposures: experimentPart.exposures,
    metricStore: experimentPart.metricStore,
    identity,
    mail: delivery.mail,
  });
  const changePart = composeChanges(c, { ...flagPart, identity, mail: delivery.mail, releases: releasePart.releases, forms });
  const files = openFileStorage(config, handle, clock, log);
  const sso = identity.sso;
  const submissionPart = composeSubmissions(c, {
    forms,
    files,
    identity,
    trackedEvents,
    delivery,
    alsoPrune: [() => audit.prune(), () => identity.throttles.prune(), () => usage.prune(), () => trackedEvents.prune(), ...(sso ? [() => sso.prune()] : [])],
  });
  const webhookPart = composeWebhooks(c, delivery);

  const scheduler = new Scheduler({ runsJobs: ports.worker?.runsJobs ?? true, log, locks: new NamedLocks(db, handle.dialect) });
  scheduleJobs(scheduler, config, { changes, usage, exposures: experimentPart.exposures, ...changePart, ...submissionPart, ...webhookPart, ...releasePart });
  const metrics =
    config.metrics.port === undefined
      ? undefined
      : new Metrics({
          reads,
          streams,
          flagdSync: flagdSyncServer,
          // Every delivery queue: the submissions' outbox, project webhooks, change-request e-mails, release e-mails.
          outbox: allDeliveries([submissionPart.outbox, webhookPart.webhookWorker, changePart.changeNotifier.deliveries, releasePart.releaseGuard.deliveries]),
          database: handle,
        });
  reads.observer = metrics;
  const tracing =
    config.tracing.otlpEndpoint !== undefined || config.tracing.otlpTracesEndpoint !== undefined
      ? await startTracing(config.tracing, PACKAGE_VERSION)
      : undefined;

  return {
    config,
    handle,
    log,
    worker: ports.worker,
    events,
    audit,
    projects,
    identity,
    createdAdminToken,
    ...services(flagPart, 'flagStore'),
    ...services(experimentPart, 'metricStore'),
    ...services(changePart, 'changeNotifier'),
    forms,
    formReadTokens,
    ...submissionPart,
    ...webhookPart,
    ...releasePart,
    apiKeys: new ApiKeyService({ db, store: new ApiKeyStore(), projects, audit, clock }),
    feedback: new FeedbackService({ db, store: new FeedbackStore(), projects, flags, events, clock }),
    codeRefs: new CodeRefService({ db, store: new CodeRefStore(handle.dialect), projects, flags, usage, audit, clock }),
    resultPageKey: await instanceSecret(db, c.settings, 'result_page_key'),
    files,
    metrics,
    tracing,
    scheduler,
    healthy: () => handle.healthy(),
    readiness: new Readiness(() => handle.healthy()),
    droppedLogLines: logger.dropped,
    flushLogs: logger.flush,
    async start() {
      await changes.start();
      scheduler.start();
    },
    async stop() {
      streams.closeAll();
      await flagdSyncServer.close();
      // After the servers closed: every answered read is counted, and written (the usage job's last
      // flush) before the database closes.
      await scheduler.stop();
      delivery.mail?.close();
      await changes.stop();
      files.close();
      await tracing?.shutdown();
    },
  };
}

/** A part's services without what it built for the other parts only (a store, a notifier). */
function services<T extends object, K extends keyof T>(part: T, ...internal: K[]): Omit<T, K> {
  const out = { ...part };
  for (const key of internal) delete out[key];
  return out;
}
