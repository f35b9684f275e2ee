/** The auth service: users, sessions, access tokens and their keys, API keys. */
import path from 'node:path';
import { RpcClient, ensureStreams, publishFact, serveRpc } from '@mailroom/messaging';
import { SecretBox, type Logger } from '@mailroom/platform';
import type { ServiceModule } from '@mailroom/runtime';
import { newId } from '@mailroom/contracts';
import { loadConfig, type AuthConfig } from './config';
import { AccessTokens } from './domain/access-tokens';
import { Accounts } from './domain/accounts';
import { ApiKeys } from './domain/api-keys';
import { Passwords } from './domain/passwords';
import type { OrgsPort, RevocationPort } from './domain/ports';
import { ApiKeyRepository } from './repo/api-key.repository';
import { SigningKeyRepository } from './repo/signing-key.repository';
import type { AuthDb } from './repo/tables';
import { UserRepository } from './repo/user.repository';
import { authHandlers } from './rpc/handlers';
import type { Bus } from '@mailroom/messaging';

function orgsPort(rpc: RpcClient): OrgsPort {
  const parent = () => ({ requestId: newId('request') });
  return {
    createForOwner: (owner_user_id, name) => rpc.asService('auth', 'orgs.organization.createForOwner', { owner_user_id, name }, parent()),
    memberships: async (user_id) => (await rpc.asService('auth', 'orgs.membership.listForUser', { user_id }, parent())).data,
    organization: (org_id) => rpc.asService('auth', 'orgs.organization.get', { org_id }, parent()),
    environment: (org_id, env_id) => rpc.asService('auth', 'orgs.environment.get', { org_id, env_id }, parent()),
  };
}

function revocationPort(bus: Bus, log: Logger): RevocationPort {
  return {
    // Gateways keep revoked sessions in a deny list; without this fact a logged-out token would live on.
    sessionRevoked: async (fact) => {
      await publishFact(bus, 'internal.auth.session.revoked', fact, `revoke-${fact.session_id}-${Date.now()}`);
    },
    // Key caches expire within a second anyway; the fact only makes it immediate.
    apiKeyRevoked: async (fact) => {
      await publishFact(bus, 'internal.auth.apikey.revoked', fact, `revoke-${fact.key_id}`).catch((err: unknown) =>
        log.warn({ err, key_id: fact.key_id }, 'could not announce API key revocation; caches expire it within 1 s'),
      );
    },
  };
}

export const authService: ServiceModule<AuthConfig, AuthDb> = {
  name: 'auth',
  database: { schema: 'auth', migrationsDir: path.join(__dirname, '..', 'migrations') },
  loadConfig,
  async start({ config, bus, db, life, clock, log }) {
    await ensureStreams(bus, ['AUTH_FACTS']);
    const rpc = new RpcClient(bus);
    const tokens = new AccessTokens(db, new SigningKeyRepository(db), new SecretBox(config.SECRETS_ENCRYPTION_KEY), clock, {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    });
    await tokens.init();
    const revocations = revocationPort(bus, log);
    const accounts = new Accounts(db, new UserRepository(db), new Passwords(), tokens, orgsPort(rpc), revocations, clock, {
      refreshTokenTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
    });
    const apiKeys = new ApiKeys(new ApiKeyRepository(db), orgsPort(rpc), revocations, clock);
    life.add('auth:rpc', serveRpc(bus, 'auth', authHandlers(accounts, apiKeys, tokens)), (s) => s.stop());
  },
};
