/**
 * Access tokens: short-lived JWTs signed with Ed25519 (jose), `kid` in the header so keys
 * rotate without invalidating tokens in flight. Private keys are sealed at rest. The JWKS
 * lists the active key and those retired less than a token lifetime (plus margin) ago.
 */
import { exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { z } from 'zod';
import { newId, type Role } from '@mailroom/contracts';
import type { Clock, SecretBox } from '@mailroom/platform';
import type { SigningKeyRepository } from '../repo/signing-key.repository';
import type { Transact } from './ports';

export const ACCESS_TOKEN_ALG = 'EdDSA';
export const ACCESS_TOKEN_TYPE = 'at+jwt';

export interface AccessTokenClaims {
  userId: string;
  sessionId: string;
  orgId: string;
  envId: string;
  role: Role;
}

export interface AccessTokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

interface ActiveKey {
  kid: string;
  key: CryptoKey;
}

const CACHE_MS = 30_000;

/** Signing keys as stored: Ed25519 JWKs (jose reads the rest of them). */
const publicJwk = z.looseObject({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string(), kid: z.string(), alg: z.literal(ACCESS_TOKEN_ALG) });
const sealedJwk = publicJwk.extend({ d: z.string() });

export class AccessTokens {
  private active: { key: ActiveKey; loadedAt: number } | undefined;

  constructor(
    private readonly transact: Transact,
    private readonly keys: SigningKeyRepository,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    readonly settings: AccessTokenSettings,
  ) {}

  /** Makes sure a signing key exists; safe when several instances start at once. */
  async init(): Promise<void> {
    await this.transact(async (trx) => {
      await this.keys.lock(trx);
      const existing = await this.keys.listVerifying(this.clock.now(), trx);
      if (!existing.some((k) => k.retired_at === null)) await this.createKey(trx);
    });
  }

  /** A new active key; the previous ones keep verifying until their tokens expired. */
  async rotate(): Promise<string> {
    const kid = await this.transact(async (trx) => {
      await this.keys.lock(trx);
      const created = await this.createKey(trx);
      await this.keys.retireAllExcept(created, this.clock.now(), trx);
      return created;
    });
    this.active = undefined;
    return kid;
  }

  private async createKey(trx: Parameters<SigningKeyRepository['insert']>[1]): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPair(ACCESS_TOKEN_ALG, { crv: 'Ed25519', extractable: true });
    const kid = newId('signingKey');
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ACCESS_TOKEN_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ACCESS_TOKEN_ALG };
    await this.keys.insert(
      { kid, alg: ACCESS_TOKEN_ALG, public_jwk: publicJwk, private_jwk_sealed: this.box.seal(JSON.stringify(privateJwk), kid), now: this.clock.now() },
      trx,
    );
    return kid;
  }

  private async activeKey(): Promise<ActiveKey> {
    const nowMs = this.clock.now().getTime();
    if (this.active && nowMs - this.active.loadedAt < CACHE_MS) return this.active.key;
    const rows = await this.keys.listVerifying(this.clock.now());
    const row = rows.find((k) => k.retired_at === null);
    if (!row) throw new Error('no active signing key');
    const jwk = sealedJwk.parse(JSON.parse(this.box.open(row.private_jwk_sealed, row.kid).toString('utf8')));
    const key = (await importJWK(jwk, ACCESS_TOKEN_ALG)) as CryptoKey;
    this.active = { key: { kid: row.kid, key }, loadedAt: nowMs };
    return this.active.key;
  }

  async issue(claims: AccessTokenClaims): Promise<{ token: string; expiresIn: number }> {
    const { kid, key } = await this.activeKey();
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const token = await new SignJWT({ sid: claims.sessionId, org: claims.orgId, env: claims.envId, role: claims.role })
      .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid, typ: ACCESS_TOKEN_TYPE })
      .setSubject(claims.userId)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + this.settings.ttlSeconds)
      .setJti(newId('request').slice(4))
      .sign(key);
    return { token, expiresIn: this.settings.ttlSeconds };
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    // Retired keys stay published one token lifetime plus 5 minutes of clock skew.
    const since = new Date(this.clock.now().getTime() - (this.settings.ttlSeconds + 300) * 1000);
    const rows = await this.keys.listVerifying(since);
    return { keys: rows.map((r): JWK => publicJwk.parse(r.public_jwk)) };
  }
}
