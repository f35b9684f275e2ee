import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { AppError, newId, type RpcName } from '@mailroom/contracts';
import type { FactWatch } from '@mailroom/messaging';
import { createLogger, systemClock } from '@mailroom/platform';
import { Authenticator, type FollowFacts } from './authenticator';

const settings = { issuer: 'mailroom-test', audience: 'mailroom-api', apiKeyCacheTtlMs: 0, accessTokenTtlSeconds: 900 };
const call = { requestId: newId('request') };
const org = newId('organization');
const env = newId('environment');

async function setup() {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA' };
  const rpc = {
    call: async (op: RpcName) => {
      if (op === 'auth.jwks.get') return { keys: [jwk] };
      if (op === 'auth.apikey.verify') return { key_id: newId('apiKey'), org_id: org, env_id: env, permissions: ['mail.read'] };
      throw new Error(`unexpected ${op}`);
    },
  };
  // Facts replay until the test says they are read.
  let replayed!: () => void;
  const caughtUp = new Promise<void>((r) => (replayed = r));
  const watches: FactWatch[] = [];
  const follow: FollowFacts = async () => {
    const watch = { caughtUp, stop: async () => {} };
    watches.push(watch);
    return watch;
  };
  const token = await new SignJWT({ sid: newId('session'), org, env, role: 'admin' })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: 'k1' })
    .setSubject(newId('user'))
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
  // @ts-expect-error: a stand-in RPC client answering the two operations the authenticator calls
  const authenticator = new Authenticator(follow, rpc, settings, systemClock, createLogger({ service: 'test', level: 'silent' }));
  return { authenticator, token, replayed, watches };
}

describe('a gateway still reading the facts that existed at its start', () => {
  it('answers user tokens 503 and is not ready, then admits them once every fact is read', async () => {
    const { authenticator, token, replayed, watches } = await setup();
    const starting = authenticator.start();
    await expect(authenticator.authenticate('tenant', `Bearer ${token}`, undefined, call)).rejects.toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 2 });
    expect(() => authenticator.ready()).toThrow(/still reading recent session revocations/);
    // API keys are verified by auth on each lookup: they do not wait for the replay.
    await expect(authenticator.authenticate('tenant', 'Bearer mr_abc', undefined, call)).resolves.toMatchObject({ kind: 'api_key', org_id: org });
    replayed();
    await starting;
    expect(watches).toHaveLength(3);
    expect(() => authenticator.ready()).not.toThrow();
    await expect(authenticator.authenticate('tenant', `Bearer ${token}`, undefined, call)).resolves.toMatchObject({ kind: 'user', org_id: org, role: 'admin' });
    await authenticator.stop();
  });

  it('is the same refusal, in the error shape, for every user route', async () => {
    const { authenticator, token } = await setup();
    const err: unknown = await authenticator.authenticate('user', `Bearer ${token}`, undefined, call).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 503, retryable: true });
  });
});
