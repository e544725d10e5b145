import type { MailSender } from '../delivery/index.ts';
import { WebhookTargetRule } from '../delivery/index.ts';
import type { ExposureRecorder, MetricStore } from '../experiments/index.ts';
import type { FlagService } from '../flags/index.ts';
import type { Identity } from '../identity/index.ts';
import type { FlagReadModel } from '../evaluation/index.ts';
import {
  ExperimentGuardrailData,
  PrometheusClient,
  ReleaseExposures,
  ReleaseGuard,
  ReleaseService,
  ReleaseStore,
  ReleaseTemplateService,
} from '../releases/index.ts';
import type { Composition } from './context.ts';

/**
 * Releases (issue 33): the service, templates and the guard. The guard runs in one process of each
 * instance; its moves are conditional on each release's version, so instances that run it at once still
 * move each release once.
 */
export function composeReleases(
  c: Composition,
  deps: { flags: FlagService; reads: FlagReadModel; exposures: ExposureRecorder; metricStore: MetricStore; identity: Identity; mail: MailSender | undefined },
) {
  const { config, db, handle, events, audit, clock, log, projects, ports } = c;
  const store = new ReleaseStore(handle.dialect);
  const data = new ExperimentGuardrailData(db, deps.metricStore);
  // Single-flag OFREP evaluations that an active release's split serves record exposures too (its guardrails count them).
  deps.reads.exposures = new ReleaseExposures({ db, store, inner: deps.exposures, events, log });
  const releases = new ReleaseService({
    db,
    store,
    projects,
    flags: deps.flags,
    events,
    audit,
    clock,
    data,
    targets: new WebhookTargetRule(config.outbox.webhookTargets),
    mail: deps.mail,
    accounts: deps.identity.accounts.members,
    publicUrl: config.publicUrl,
  });
  const releaseTemplates = new ReleaseTemplateService({ db, store, projects, releases, audit, clock });
  const releaseGuard = new ReleaseGuard({
    db,
    store,
    projects,
    releases,
    data,
    prometheus: new PrometheusClient({ policy: config.outbox.webhookTargets, lookup: ports.lookup }),
    clock,
    mail: deps.mail,
    maxAttempts: config.outbox.maxAttempts,
    log,
    pollMs: config.releases.checkMs,
  });
  return { releases, releaseTemplates, releaseGuard };
}
