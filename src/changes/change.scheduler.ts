import type { OutageLog } from '../db/outage.ts';
import { JobLoop } from '../delivery/index.ts';
import type { ChangeApplier } from './change-apply.service.ts';
import type { ChangeNotifier } from './change.notifier.ts';

export interface ChangeSchedulerDeps {
  applier: Pick<ChangeApplier, 'runDue'>;
  /** Its e-mails go out in the same rounds. */
  notifier: Pick<ChangeNotifier, 'deliverDue'>;
  log: OutageLog;
  /** How often due changes are looked for; 0 turns the loop off (a test then calls runOnce). */
  pollMs: number;
}

/**
 * The periodic job of scheduled changes (issue 24), on the delivery loops' `JobLoop`: a first round at
 * start (changes due while the process was down are applied then, recorded as late), then one every
 * `pollMs`; rounds of this instance never overlap. A failed round (the database is away) is logged once
 * per outage and retried with backoff. Every instance runs it; the claim in ChangeApplier.runDue makes
 * each change apply once. `runOnce()` applies what is due now and resolves with the number applied.
 */
export class ChangeScheduler extends JobLoop {
  constructor(private readonly deps: ChangeSchedulerDeps) {
    super({ name: 'scheduled changes', log: deps.log, pollMs: deps.pollMs, firstRunMs: 0 });
  }

  protected async runDue(): Promise<number> {
    // Issue 31 item 16: an operator reading the log sees each change the schedule applied.
    const applied = await this.deps.applier.runDue((change) =>
      this.deps.log.info(
        { changeRequest: change.id, project: change.project, environment: change.environment, scheduledAt: change.scheduledAt, late: change.late },
        `scheduled change applied: ${change.title}`,
      ),
    );
    await this.deps.notifier.deliverDue();
    return applied;
  }
}
