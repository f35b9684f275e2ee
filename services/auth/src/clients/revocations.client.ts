/** Revocations announced on AUTH_FACTS, as the auth domain's RevocationPort. */
import { publishFact, type Bus } from '@mailroom/messaging';
import type { Logger } from '@mailroom/platform';
import type { RevocationPort } from '../domain/ports';

export function revocationsClient(bus: Bus, log: Logger): RevocationPort {
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
