import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import type { SsoConfig } from '../config.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, messages } from '../errors.ts';
import { normalizeEmail, type User } from './account.ts';
import type { AccountStore } from './account.store.ts';
import type { Actor } from './actor.ts';
import { type AuditTrail, unchanged } from './audit-trail.ts';
import { returnPath } from '../http/return-path.ts';
import { groupsOf, matchIdentity, roleAfterSignIn, roleOfGroups } from './sso.ts';
import type { SsoStore } from './sso.store.ts';
import type { SignInThrottles } from './sign-in-throttles.ts';
import { hashToken } from './token-hash.ts';

export interface SsoServiceDeps {
  db: Db;
  store: SsoStore;
  accounts: AccountStore;
  audit: AuditTrail;
  clock: () => Date;
  config: SsoConfig;
  log: Logger;
  /** Counts each client key's starts (shared by every instance, like the sign-in throttles). */
  throttles: Pick<SignInThrottles, 'reserveSsoStart'>;
}

/** A sign-in must come back from the provider within this time. */
const LOGIN_TTL_MS = 10 * 60_000;
/** What an SSO member's password hash is: no scrypt hash, so no password ever matches it (password.ts). */
const NO_PASSWORD = 'sso';

/** What the sign-in page shows. */
export interface SsoInfo {
  enabled: boolean;
  name: string | null;
  passwordsOff: boolean;
}

/**
 * Single sign-on with an OpenID Connect provider (docs/adr/0032-identity-and-sso.md): discovery, the
 * authorization code flow with PKCE, `state` and `nonce`, ID-token validation (claims and signature) by
 * openid-client. A sign-in under way is kept in the database (every instance may take the callback),
 * bound to the browser that started it and taken out on first use. Members are matched by issuer and
 * subject; their role comes from their groups at every sign-in.
 */
export class SsoService {
  private discovered: Promise<oidc.Configuration> | undefined;

  constructor(private readonly deps: SsoServiceDeps) {}

  get info(): SsoInfo {
    return { enabled: true, name: this.deps.config.name, passwordsOff: this.deps.config.only };
  }

  /**
   * Starts a sign-in for `client` (a client key): the provider's authorization URL, and the value of the
   * cookie that binds the sign-in to this browser. Each start writes a row until its callback or its
   * expiry, so starts are counted per client key (429 past FLAGPOST_SSO_STARTS_PER_CLIENT in the sign-in
   * lifetime) and the sign-ins under way are capped (503 past FLAGPOST_SSO_MAX_PENDING).
   */
  async begin(next: string | undefined, client: string): Promise<{ url: string; browserToken: string }> {
    const config = await this.configuration();
    const attempt = await this.deps.throttles.reserveSsoStart(client, { limit: this.deps.config.startsPerClient, windowMs: LOGIN_TTL_MS });
    if (attempt.retryAfter > 0) throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: attempt.retryAfter });
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const browserToken = randomBytes(32).toString('base64url');
    const now = this.deps.clock();
    await this.deps.store.deleteExpiredLogins(this.deps.db, now.toISOString());
    if ((await this.deps.store.countOpenLogins(this.deps.db, now.toISOString())) >= this.deps.config.maxPending) {
      throw new AppError('unavailable', messages.ssoBusy, { retryAfterSeconds: 60 });
    }
    await this.deps.store.insertLogin(
      this.deps.db,
      hashToken(state),
      {
        browserHash: hashToken(browserToken),
        nonce,
        codeVerifier,
        nextPath: returnPath(next, this.deps.config.publicUrl),
        expiresAt: new Date(now.getTime() + LOGIN_TTL_MS).toISOString(),
      },
      now.toISOString(),
    );
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.deps.config.redirectUrl,
      scope: this.deps.config.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, browserToken };
  }

  /**
   * Completes a sign-in from the provider's redirect (`query`, the callback's query string) in the
   * browser holding `browserToken`: the member, provisioned or updated, and the path to return to.
   * 401 for anything forged, replayed or expired; 403 without a mapped group.
   */
  async complete(query: string, browserToken: string | undefined, client: string): Promise<{ user: User; nextPath: string }> {
    const failed = () => new AppError('unauthorized', messages.ssoFailed);
    const params = new URLSearchParams(query);
    const state = params.get('state');
    if (!state || state.length > 500 || !browserToken || browserToken.length > 200) throw failed();
    const login = await this.deps.store.takeLogin(this.deps.db, hashToken(state));
    if (!login || login.browserHash !== hashToken(browserToken) || login.expiresAt <= this.deps.clock().toISOString()) throw failed();
    const config = await this.configuration();
    const callback = new URL(this.deps.config.redirectUrl);
    callback.search = params.toString();
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: login.codeVerifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims()!;
      claims = { ...idClaims };
      // Many providers put e-mail and groups in userinfo only; the ID token's subject must match it.
      if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        claims = { ...info, ...idClaims, ...pick(info, ['email', 'email_verified', this.deps.config.groupsClaim.split('.')[0]!]) };
      }
    } catch (error) {
      throw this.providerError(error, failed);
    }
    const user = await this.provision(String(claims.iss), String(claims.sub), claims, client);
    return { user, nextPath: login.nextPath };
  }

  /** The provider's logout URL (RP-initiated logout), where it has one. */
  async endSessionUrl(): Promise<string | undefined> {
    try {
      const config = await this.configuration();
      if (!config.serverMetadata().end_session_endpoint) return undefined;
      return oidc.buildEndSessionUrl(config, { client_id: this.deps.config.clientId, post_logout_redirect_uri: this.deps.config.postLogoutUrl }).href;
    } catch {
      // Signing out of Flagpost does not depend on the provider being reachable.
      return undefined;
    }
  }

  /** Deletes sign-ins that never came back (the retention job). */
  async prune(): Promise<number> {
    return this.deps.store.deleteExpiredLogins(this.deps.db, this.deps.clock().toISOString());
  }

  private async provision(issuer: string, subject: string, claims: Record<string, unknown>, client: string): Promise<User> {
    const role = roleOfGroups(groupsOf(claims, this.deps.config.groupsClaim), this.deps.config.roles);
    const email = typeof claims.email === 'string' ? normalizeEmail(claims.email).slice(0, 320) : undefined;
    if (!role) {
      await this.audit({ type: 'anonymous', id: null, label: client }, 'sign_in.failed', subject, {
        method: { after: 'sso' },
        reason: { after: 'no mapped group' },
      });
      throw new AppError('forbidden', messages.ssoNoRole);
    }
    return this.deps.db.transaction().execute(async (trx) => {
      await this.deps.accounts.lockMembers(trx);
      const now = nowIso(this.deps.clock);
      const linkedUserId = await this.deps.store.findLinkedUser(trx, issuer, subject);
      const withEmail = email && !linkedUserId ? await this.deps.accounts.findUserByEmail(trx, email) : undefined;
      const match = matchIdentity({
        linkedUserId,
        userWithEmail: withEmail && { id: withEmail.id, linked: await this.deps.store.isLinked(trx, withEmail.id, issuer) },
        emailVerified: claims.email_verified === true,
        breakGlass: email !== undefined && email === this.deps.config.breakGlassEmail,
      });
      let user: User;
      if (match.kind === 'email-taken') throw new AppError('conflict', messages.ssoEmailTaken);
      if (match.kind === 'email-unverified') throw new AppError('forbidden', messages.ssoEmailUnverified);
      if (match.kind === 'break-glass') throw new AppError('forbidden', messages.ssoBreakGlass);
      if (match.kind === 'create') {
        if (!email) throw new AppError('forbidden', messages.ssoNoEmail);
        user = { id: newId(), email, role, createdAt: now, updatedAt: now };
        await this.deps.accounts.insertUser(trx, user, NO_PASSWORD);
        await this.deps.store.link(trx, issuer, subject, user.id, now);
        await this.deps.audit.record(trx, actorOf(user), {
          entity: 'member',
          entityId: user.id,
          action: 'member.joined',
          changes: { email: { after: email }, role: { after: role }, method: { after: 'sso' } },
        });
      } else {
        const found = await this.deps.accounts.findUser(trx, match.userId);
        if (!found) throw new AppError('unauthorized', messages.ssoFailed);
        if (found.email === this.deps.config.breakGlassEmail) throw new AppError('forbidden', messages.ssoBreakGlass);
        if (match.kind === 'link') await this.deps.store.link(trx, issuer, subject, found.id, now);
        else await this.deps.store.touch(trx, issuer, subject, now);
        user = found;
        // The provider's groups decide the role at every sign-in, except that the last owner stays one.
        const next = found.role === 'owner' && role !== 'owner' ? roleAfterSignIn(found.role, role, await this.deps.accounts.countOwners(trx)) : role;
        if (next !== role) this.deps.log.warn({ userId: found.id, mapped: role }, 'single sign-on kept the last owner an owner');
        if (found.role !== next) {
          await this.deps.accounts.updateRole(trx, found.id, next, now);
          if (found.role === 'owner') await this.deps.accounts.deleteOpenInvitationsBy(trx, found.id);
          await this.deps.audit.record(trx, actorOf(found), {
            entity: 'member',
            entityId: found.id,
            action: 'member.role_changed',
            changes: { email: unchanged(found.email), role: { before: found.role, after: next }, method: { after: 'sso' } },
          });
          user = { ...found, role: next, updatedAt: now };
        }
      }
      await this.deps.audit.record(trx, actorOf(user), {
        entity: 'sign_in',
        entityId: user.id,
        action: 'sign_in.succeeded',
        changes: { method: { after: 'sso' }, address: { after: client } },
      });
      return user;
    });
  }

  private async audit(actor: Actor, action: string, entityId: string, changes: Record<string, { after: unknown }>): Promise<void> {
    await this.deps.audit.record(this.deps.db, actor, { entity: 'sign_in', entityId: entityId.slice(0, 200), action, changes });
  }

  private configuration(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.deps.config;
    // Discovered once; a failed discovery is tried again by the next sign-in (the provider may come later).
    this.discovered ??= (async () => {
      const options = new URL(issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests], timeout: 10 } : { timeout: 10 };
      const config = await oidc.discovery(new URL(issuer), clientId, clientSecret, undefined, options);
      // The ID token's signature is checked against the provider's keys too, not only its claims.
      oidc.enableNonRepudiationChecks(config);
      return config;
    })().catch((error: unknown) => {
      this.discovered = undefined;
      this.deps.log.warn({ err: error, issuer }, 'OpenID provider discovery failed');
      throw new AppError('unavailable', messages.ssoUnavailable, { retryAfterSeconds: 5 });
    });
    return this.discovered;
  }

  private providerError(error: unknown, failed: () => AppError): AppError {
    if (error instanceof AppError) return error;
    const unreachable = error instanceof TypeError || (error instanceof Error && error.name === 'AbortError');
    this.deps.log.warn({ err: error }, unreachable ? 'OpenID provider unreachable' : 'single sign-on refused');
    return unreachable ? new AppError('unavailable', messages.ssoUnavailable, { retryAfterSeconds: 5 }) : failed();
  }
}

const actorOf = (user: User): Actor => ({ type: 'user', id: user.id, label: user.email });

const pick = (from: Record<string, unknown>, keys: string[]): Record<string, unknown> =>
  Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]));
