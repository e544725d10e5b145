import { AccessTokenService } from './access-token.service.ts';
import type { AccountServiceDeps } from './account.deps.ts';
import { InvitationService } from './invitation.service.ts';
import { MemberService } from './member.service.ts';

export type { AccountServiceDeps } from './account.deps.ts';
export { ACCESS_TOKEN_DEFAULT_DAYS, ACCESS_TOKEN_MAX_DAYS, ACCESS_TOKEN_PREFIX } from './access-token.service.ts';

/**
 * Users, invitations, personal access tokens and the account settings (issue 13,
 * docs/adr/0021-accounts-and-roles.md), as three services over one store (issue 30: none over ten
 * public methods). Every write is audited in its transaction.
 */
export interface Accounts {
  /** Members, their roles and passwords, who a session acts as, and the members settings. */
  readonly members: MemberService;
  /** Invitation links: made by owners, accepted once. */
  readonly invitations: InvitationService;
  /** Personal access tokens, and who one acts as. */
  readonly accessTokens: AccessTokenService;
}

export function openAccounts(deps: AccountServiceDeps): Accounts {
  return { members: new MemberService(deps), invitations: new InvitationService(deps), accessTokens: new AccessTokenService(deps) };
}
