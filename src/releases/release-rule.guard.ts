import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import { type FlagWrite, type FlagWriteGuard, releaseRuleChange } from '../flags/index.ts';

/**
 * The flag write door's rule of releases (issue 33): while a release is active its rule is the flag's
 * last one and only the release moves it, so any other write (admin API, change request, flags as code,
 * flagd import) that changes, removes, adds or moves a `release-…` rule is refused, naming the release.
 * The release's own writes say so (`owner: 'release'`); the flag's other targeting stays editable.
 */
export class ReleaseRuleGuard implements FlagWriteGuard {
  readonly name = 'release rules';

  async check(_trx: Executor, write: FlagWrite): Promise<void> {
    if (write.kind !== 'update' || write.owner === 'release') return;
    const owned = releaseRuleChange(write.before.targeting.rules, write.after.targeting.rules);
    if (owned) throw new AppError('conflict', message('releaseRuleOwned', { ...owned, slug: write.before.slug }));
  }
}
