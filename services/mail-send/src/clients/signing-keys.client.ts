/** A custom domain's signing key, asked of domains over NATS (a service-only operation); its sealed key opened here. */
import { createPrivateKey } from 'node:crypto';
import { isAppError, newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { SecretBox } from '@mailroom/platform';
import type { OpenKey, SigningKeyLookup } from '../domain/sending-domains';

export function signingKeysClient(rpc: RpcClient): SigningKeyLookup {
  return async (org_id, env_id, domain_name) => {
    try {
      return await rpc.asService('mail-send', 'domains.domain.signingKey', { org_id, env_id, domain_name }, { requestId: newId('request') });
    } catch (err) {
      if (isAppError(err) && err.code === 'not_found') return null;
      throw err;
    }
  };
}

/** Opens with the SECRETS_ENCRYPTION_KEY domains sealed with; the domain id is the associated data. */
export function keyOpener(box: SecretBox): OpenKey {
  return (sealed, domainId) => createPrivateKey(box.open(Buffer.from(sealed, 'base64'), domainId).toString('utf8'));
}
