/**
 * Turns a bearer credential into the request's AuthContext.
 * - API keys (`mr_...`): verified by the auth service, remembered for at most
 *   API_KEY_CACHE_TTL_MS (<= 1 s) so a revocation takes effect within a second even when
 *   its announcement is lost; an announced revocation evicts at once.
 * - User access tokens (JWT): verified here against the auth service's JWKS (EdDSA only,
 *   iss/aud/exp/typ checked), then checked against the deny list of revoked sessions,
 *   which is replayed from the AUTH_FACTS stream at start so a restart forgets nothing,
 *   and against membership changes (ORGS_FACTS, replayed the same way): a token whose
 *   holder was removed from its organization is refused, one whose holder's role changed
 *   acts with the new role, as soon as the fact arrives rather than when the token expires.
 * - X-Env-Id: an API key acts only in its own environment (another is 403); a user token in
 *   the environment it names, if the person may act there (owners and admins: every one of
 *   the organization; others: the default one and those they were given), else 404.
 *   Environment-membership changes and deletions on ORGS_FACTS are read before the cache
 *   of confirmed environments, so a removal applies as soon as its fact arrives.
 * - Admin keys (`mra_...`) on admin routes only (admin-keys.ts); tenant credentials there, and
 *   admin keys on every other route, are 403.
 * Until the facts that existed at start are read, user tokens answer 503 and readiness fails:
 * a restarted gateway never admits a token it would refuse a moment later.
 */
import { createLocalJWKSet, jwtVerify, errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import { AppError, can, idSchema, newId, roleSchema, type AuthContext, type Fact, type FactSubject, type Role, type RpcParsedResponse, type StreamName } from '@mailroom/contracts';
import type { CallContext, FactWatch, RpcClient } from '@mailroom/messaging';
import { sha256, ttlCache, type Clock, type Logger, type TtlCache } from '@mailroom/platform';
import type { AuthMode } from '../routes';
import { AdminKeyVerifier, isAdminKey } from './admin-keys';
import { isCanonicalCompactJws } from './jws-format';

export interface AuthenticatorSettings {
  issuer: string;
  audience: string;
  apiKeyCacheTtlMs: number;
  accessTokenTtlSeconds: number;
}

const claimsSchema = z.object({
  sub: idSchema('user'),
  sid: idSchema('session'),
  org: idSchema('organization'),
  env: idSchema('environment'),
  role: roleSchema,
});

type KeyVerification = RpcParsedResponse<'auth.apikey.verify'>;

/** watchFacts with the bus given: the facts of `subjects` on `stream` since `since`, then as they come. */
export type FollowFacts = <S extends FactSubject>(stream: StreamName, subjects: S[], since: Date, onFact: (subject: S, fact: Fact<S>) => void) => Promise<FactWatch>;

const MAX_CACHED_KEYS = 10_000;
const MAX_CACHED_ENVIRONMENTS = 10_000;
const JWKS_MIN_REFRESH_MS = 5_000;
const JWKS_REFRESH_MS = 5 * 60_000;
const ENV_CACHE_MS = 60_000;

function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message);
}

export class Authenticator {
  /** By key hash; absent when the TTL is 0. */
  private readonly keys: TtlCache<string, { value: KeyVerification | null }> | undefined;
  private readonly adminKeys: AdminKeyVerifier;
  /** Lookups under way, so concurrent requests with one key ask once. */
  private readonly keyLookups = new Map<string, Promise<KeyVerification | null>>();
  /**
   * Session id -> until when its tokens could be valid. A deny list, not a cache: an entry
   * must not be dropped for room before then, so it is bounded by time alone (sweep).
   */
  private readonly revokedSessions = new Map<string, number>();
  /**
   * `org/user` -> the person's role in the organization since a change (null: no longer a
   * member), kept until no token issued before the change can be valid. Like the deny list,
   * bounded by time alone: an entry dropped early would give a removed member access back.
   */
  private readonly membershipChanges = new Map<string, { role: Role | null; until: number }>();
  private memberFacts: FactWatch | undefined;
  /**
   * `org/env/user` -> whether the person has the environment since a change, and
   * environment id -> until when it is known deleted (ORGS_FACTS, replayed like membership
   * changes). They are read before the cache of confirmed environments, so a confirmation
   * asked for before a removal cannot give the environment back.
   */
  private readonly environmentChanges = new Map<string, { member: boolean; until: number }>();
  private readonly deletedEnvironments = new Map<string, number>();
  private environmentFacts: FactWatch | undefined;
  /** Whether the revocations, membership and environment changes that existed at start have been read. */
  private replayed = false;
  /** `org/env/user` (or `org/env/*` for owners and admins) the orgs service confirmed. */
  private readonly environments = ttlCache<string, true>({ max: MAX_CACHED_ENVIRONMENTS, ttlMs: ENV_CACHE_MS });
  private jwks: JWTVerifyGetKey | undefined;
  private jwksLoadedAt = 0;
  private jwksLoading: Promise<void> | undefined;
  private facts: FactWatch | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** How facts are followed: watchFacts on the gateway's bus. */
    private readonly follow: FollowFacts,
    private readonly rpc: Pick<RpcClient, 'call'>,
    private readonly settings: AuthenticatorSettings,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.keys = settings.apiKeyCacheTtlMs > 0 ? ttlCache({ max: MAX_CACHED_KEYS, ttlMs: settings.apiKeyCacheTtlMs }) : undefined;
    this.adminKeys = new AdminKeyVerifier(rpc, settings.apiKeyCacheTtlMs);
  }

  /** Replays recent revocations before the gateway takes traffic; loads the JWKS if auth is up. */
  async start(): Promise<void> {
    const since = new Date(this.clock.now().getTime() - (this.settings.accessTokenTtlSeconds + 300) * 1000);
    this.facts = await this.follow(
      'AUTH_FACTS',
      ['internal.auth.session.revoked', 'internal.auth.apikey.revoked'],
      since,
      (subject, fact) => {
        if (subject === 'internal.auth.session.revoked' && 'session_id' in fact) {
          this.revokedSessions.set(fact.session_id, Date.parse(fact.tokens_valid_until));
        } else if ('key_id' in fact && this.keys) {
          // Collected first: the cache is not changed while it is walked.
          const revoked = [...this.keys.entries()].filter(([, entry]) => entry.value?.key_id === fact.key_id);
          for (const [hash] of revoked) this.keys.delete(hash);
        }
      },
    );
    const keepMs = (this.settings.accessTokenTtlSeconds + 300) * 1000;
    this.memberFacts = await this.follow('ORGS_FACTS', ['internal.orgs.member.changed'], since, (_subject, fact) => {
      // In stream order: the last change of a membership is the one that holds.
      this.membershipChanges.set(`${fact.org_id}/${fact.user_id}`, { role: fact.role, until: Date.parse(fact.changed_at) + keepMs });
      // A removal takes the person's environments with it (their rows go in orgs): what was
      // confirmed for them before must be asked again if they come back. Collected first: the
      // cache is not changed while it is walked.
      const confirmed = [...this.environments.entries()].map(([key]) => key).filter((key) => key.startsWith(`${fact.org_id}/`) && key.endsWith(`/${fact.user_id}`));
      for (const key of confirmed) this.environments.delete(key);
    });
    this.environmentFacts = await this.follow(
      'ORGS_FACTS',
      ['internal.orgs.environment.member.changed', 'internal.orgs.environment.deleted'],
      since,
      (_subject, fact) => {
        if ('member' in fact) {
          const key = `${fact.org_id}/${fact.env_id}/${fact.user_id}`;
          this.environmentChanges.set(key, { member: fact.member, until: Date.parse(fact.changed_at) + keepMs });
          this.environments.delete(key);
        } else {
          this.deletedEnvironments.set(fact.env_id, Date.parse(fact.deleted_at) + keepMs);
        }
      },
    );
    const replayed = Promise.all([this.facts.caughtUp, this.memberFacts.caughtUp, this.environmentFacts.caughtUp]).then(() => {
      this.replayed = true;
    });
    // A long replay does not hold the start: until it ends, user tokens answer 503 and /readyz fails.
    await Promise.race([replayed, new Promise((r) => setTimeout(r, 5_000).unref())]);
    if (!this.replayed) this.log.warn('recent revocations and membership changes still being read after 5 s: user tokens answer 503 until then');
    await this.loadJwks().catch((err: unknown) => this.log.warn({ err }, 'JWKS not loaded yet; will retry on first token'));
    this.timer = setInterval(() => {
      this.sweep();
      void this.loadJwks().catch(() => {});
    }, JWKS_REFRESH_MS).unref();
  }

  /** For /readyz: a gateway that has not read every recent revocation must not take traffic. */
  ready(): void {
    if (!this.replayed) throw new Error('still reading recent session revocations and membership changes (AUTH_FACTS, ORGS_FACTS)');
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.facts?.stop();
    await this.memberFacts?.stop();
    await this.environmentFacts?.stop();
  }

  async authenticate(mode: AuthMode, authorization: string | undefined, envHeader: string | undefined, call: Omit<CallContext, 'auth'>): Promise<AuthContext> {
    if (mode === 'none' || mode === 'signature') return { kind: 'anonymous' };
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
    if (mode === 'admin') {
      // Admin routes take admin keys only: a tenant's credential is refused before anything else.
      if (match && (match[1]!.startsWith('mr_') || match[1]!.split('.').length === 3)) throw new AppError('forbidden', 'admin operations take an admin key, not an API key or access token');
      if (!match) throw unauthorized('send your admin key as "Authorization: Bearer mra_..."');
      if (!isAdminKey(match[1]!)) throw unauthorized('credential is not an admin key');
      return this.adminKeys.verify(match[1]!, call);
    }
    if (!match) throw unauthorized('send your credential as "Authorization: Bearer <API key or access token>"');
    const token = match[1]!;
    if (isAdminKey(token)) throw new AppError('forbidden', 'an admin key acts on admin operations only (/api/v1/admin/...), not on a tenant\'s');
    if (envHeader !== undefined && !idSchema('environment').safeParse(envHeader).success) {
      throw new AppError('invalid_request', 'X-Env-Id must be an environment id (env_...)');
    }
    if (token.startsWith('mr_')) {
      if (mode === 'user') throw new AppError('forbidden', 'this operation needs a user access token, not an API key');
      const key = await this.verifyKey(token, call);
      if (envHeader !== undefined && envHeader !== key.env_id) {
        throw new AppError('forbidden', 'this API key is bound to another environment than X-Env-Id');
      }
      return { kind: 'api_key', key_id: key.key_id, org_id: key.org_id, env_id: key.env_id, permissions: key.permissions };
    }
    if (token.split('.').length === 3) {
      const user = await this.verifyAccessToken(token, call);
      // The token's own environment is the organization's default one, which every member has.
      if (envHeader !== undefined && envHeader !== user.env_id) {
        await this.checkEnvironment(user, envHeader, call);
        return { ...user, env_id: envHeader };
      }
      return user;
    }
    throw unauthorized('credential is neither an API key nor an access token');
  }

  /** The session ended through this gateway: deny it now rather than when the fact arrives. */
  sessionEnded(sessionId: string): void {
    this.revokedSessions.set(sessionId, Date.now() + this.settings.accessTokenTtlSeconds * 1000);
  }

  private async verifyKey(key: string, call: Omit<CallContext, 'auth'>): Promise<KeyVerification> {
    const hash = sha256(key).toString('base64url');
    const cached = this.keys?.get(hash);
    let value: KeyVerification | null;
    if (cached) {
      value = cached.value;
    } else {
      let lookup = this.keyLookups.get(hash);
      if (!lookup) {
        lookup = this.lookupKey(key, call).finally(() => this.keyLookups.delete(hash));
        this.keyLookups.set(hash, lookup);
      }
      value = await lookup;
      this.keys?.set(hash, { value });
    }
    if (!value) throw unauthorized('API key is invalid or has been revoked');
    return value;
  }

  private async lookupKey(key: string, call: Omit<CallContext, 'auth'>): Promise<KeyVerification | null> {
    try {
      return await this.rpc.call('auth.apikey.verify', { key }, { ...call, auth: { kind: 'service', service: 'gateway' } });
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') return null;
      throw err;
    }
  }

  private async verifyAccessToken(token: string, call: Omit<CallContext, 'auth'>): Promise<Extract<AuthContext, { kind: 'user' }>> {
    if (!isCanonicalCompactJws(token)) throw unauthorized('access token is malformed');
    // Until then a logged-out session or a removed member's token could pass.
    if (!this.replayed) throw new AppError('service_unavailable', 'the gateway is starting: it is still reading recent session revocations and membership changes; retry in a few seconds', { retryAfterSeconds: 2 });
    if (!this.jwks) await this.loadJwks(call);
    let payload: unknown;
    try {
      payload = (await this.verifyJwt(token)).payload;
    } catch (err) {
      if (err instanceof joseErrors.JWKSNoMatchingKey && this.clock.now().getTime() - this.jwksLoadedAt > JWKS_MIN_REFRESH_MS) {
        await this.loadJwks(call);
        payload = (await this.verifyJwt(token).catch((e: unknown) => this.rethrow(e))).payload;
      } else {
        this.rethrow(err);
      }
    }
    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) throw unauthorized('access token is invalid');
    const revokedUntil = this.revokedSessions.get(claims.data.sid);
    if (revokedUntil !== undefined) throw unauthorized('this session has been logged out or revoked; log in again');
    const change = this.membershipChanges.get(`${claims.data.org}/${claims.data.sub}`);
    if (change && change.role === null) throw unauthorized('you are no longer a member of this organization; log in again');
    const role = change?.role ?? claims.data.role;
    return { kind: 'user', user_id: claims.data.sub, session_id: claims.data.sid, org_id: claims.data.org, env_id: claims.data.env, role };
  }

  private verifyJwt(token: string) {
    return jwtVerify(token, this.jwks!, {
      issuer: this.settings.issuer,
      audience: this.settings.audience,
      algorithms: ['EdDSA'],
      typ: 'at+jwt',
      requiredClaims: ['exp', 'iat', 'sub'],
      clockTolerance: 5,
      currentDate: this.clock.now(),
    });
  }

  private rethrow(err: unknown): never {
    if (err instanceof joseErrors.JWTExpired) throw new AppError('token_expired', 'access token has expired; refresh it');
    if (err instanceof AppError) throw err;
    throw unauthorized('access token is invalid');
  }

  private loadJwks(call: Omit<CallContext, 'auth'> = { requestId: newId('request') }): Promise<void> {
    this.jwksLoading ??= this.rpc
      .call('auth.jwks.get', {}, { ...call, auth: { kind: 'service', service: 'gateway' } })
      .then((set) => {
        this.jwks = createLocalJWKSet({ keys: set.keys });
        this.jwksLoadedAt = this.clock.now().getTime();
      })
      .finally(() => (this.jwksLoading = undefined));
    return this.jwksLoading;
  }

  /**
   * The environment named by X-Env-Id, if this person may act in it: owners and admins in
   * every environment of their organization, others in those they were given. Anything else
   * is 404, as if it did not exist.
   */
  private async checkEnvironment(user: Extract<AuthContext, { kind: 'user' }>, envId: string, call: Omit<CallContext, 'auth'>): Promise<void> {
    const notFound = () => new AppError('not_found', 'the environment named by X-Env-Id was not found in your organization, or you are not a member of it');
    if (this.deletedEnvironments.has(envId)) throw notFound();
    const everyOne = can(user, 'environments.manage');
    const personal = `${user.org_id}/${envId}/${user.user_id}`;
    if (!everyOne && this.environmentChanges.get(personal)?.member === false) throw notFound();
    const cacheKey = everyOne ? `${user.org_id}/${envId}/*` : personal;
    if (this.environments.get(cacheKey)) return;
    try {
      await this.rpc.call(
        'orgs.environment.access',
        { org_id: user.org_id, env_id: envId, user_id: user.user_id, role: user.role },
        { ...call, auth: { kind: 'service', service: 'gateway' } },
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') throw notFound();
      throw err;
    }
    this.environments.set(cacheKey, true);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [sid, until] of this.revokedSessions) if (until + 60_000 < now) this.revokedSessions.delete(sid);
    for (const [key, change] of this.membershipChanges) if (change.until + 60_000 < now) this.membershipChanges.delete(key);
    for (const [key, change] of this.environmentChanges) if (change.until + 60_000 < now) this.environmentChanges.delete(key);
    for (const [envId, until] of this.deletedEnvironments) if (until + 60_000 < now) this.deletedEnvironments.delete(envId);
    this.keys?.purgeStale();
    this.environments.purgeStale();
  }
}
