import {
  ChangeApplier,
  ChangeNotifier,
  ChangeRequestService,
  ChangeRequestViews,
  ChangeReviewService,
  ChangeScheduler,
  ChangeStore,
  PromotionService,
} from '../changes/index.ts';
import type { MailSender } from '../delivery/index.ts';
import { ProjectDocumentService, UnleashImportService } from '../documents/index.ts';
import type { FlagService, FlagStore, FlagWrites } from '../flags/index.ts';
import type { FormService } from '../forms/index.ts';
import type { Identity } from '../identity/index.ts';
import type { ReleaseService } from '../releases/index.ts';
import type { SegmentService } from '../segments/index.ts';
import type { Composition } from './context.ts';

/** How often each instance looks for scheduled changes that are due (they apply within this of their time). */
const SCHEDULED_CHANGES_POLL_MS = 5_000;

/**
 * Change management (change requests, their review, application now or when due, compare, promote and
 * revert) and flags as code, whose changes of protected environments become change requests.
 */
export function composeChanges(
  c: Composition,
  deps: {
    flags: FlagService;
    flagStore: FlagStore;
    flagWrites: FlagWrites;
    segments: SegmentService;
    identity: Identity;
    mail: MailSender | undefined;
    /** Change requests carry release plans and start them when applied (issue 33). */
    releases: ReleaseService;
    /** Flags as code exports and applies a project's forms (issue 34). */
    forms: FormService;
  },
) {
  const { config, db, handle, events, audit, clock, log, projects } = c;
  const { flags, segments } = deps;
  const store = new ChangeStore(handle.dialect);
  const notifier = new ChangeNotifier({
    db,
    store,
    mail: deps.mail,
    accounts: deps.identity.accounts.members,
    projectRoles: deps.identity.projectRoles,
    publicUrl: config.publicUrl,
    clock,
    maxAttempts: config.outbox.maxAttempts,
    log,
  });
  const changeViews = new ChangeRequestViews({ db, store, projects, flags, segments });
  const changeRequests = new ChangeRequestService({
    db,
    store,
    projects,
    flags,
    segments,
    views: changeViews,
    audit,
    notifier,
    clock,
    events,
    releases: deps.releases,
  });
  const changeReviews = new ChangeReviewService({ db, store, views: changeViews, audit, notifier, clock, events });
  const changeApplier = new ChangeApplier({
    db,
    store,
    projects,
    flags,
    segments,
    views: changeViews,
    events,
    audit,
    notifier,
    clock,
    releases: deps.releases,
  });
  const promotion = new PromotionService({ db, projects, flags, requests: changeRequests, views: changeViews, audit, events });
  const changeScheduler = new ChangeScheduler({ applier: changeApplier, notifier, log, pollMs: SCHEDULED_CHANGES_POLL_MS });
  // Flags as code opens (and keeps or updates) the change requests of protected environments through promotion (a port: documents/ does not import changes/).
  const documents = new ProjectDocumentService({
    db,
    store: deps.flagStore,
    writes: deps.flagWrites,
    projects,
    segments,
    events,
    audit,
    clock,
    protectedChanges: promotion,
    forms: deps.forms,
  });
  const unleash = new UnleashImportService({ documents });
  return { changeNotifier: notifier, changeViews, changeRequests, changeReviews, changeApplier, promotion, changeScheduler, documents, unleash };
}
