/**
 * Admin keys (`mra_...`) on admin routes: verified by the admin service, remembered for at most
 * the API keys' cache time (<= 1 s), so a revocation takes effect everywhere within a second.
 * Unknown, revoked and expired keys are remembered as such for as long, so a flood of bad keys
 * asks the admin service once a second per key.
 */
import { ADMIN_KEY_PREFIX, AppError, type AuthContext } from '@mailroom/contracts';
import type { CallContext, RpcClient } from '@mailroom/messaging';
import { sha256, ttlCache, type TtlCache } from '@mailroom/platform';

const MAX_CACHED = 10_000;

export function isAdminKey(token: string): boolean {
  return token.startsWith(ADMIN_KEY_PREFIX);
}

export class AdminKeyVerifier {
  private readonly cache: TtlCache<string, { id: string | null }> | undefined;

  constructor(
    private readonly rpc: Pick<RpcClient, 'call'>,
    cacheTtlMs: number,
  ) {
    this.cache = cacheTtlMs > 0 ? ttlCache({ max: MAX_CACHED, ttlMs: cacheTtlMs }) : undefined;
  }

  async verify(key: string, call: Omit<CallContext, 'auth'>): Promise<Extract<AuthContext, { kind: 'admin' }>> {
    const hash = sha256(key).toString('base64url');
    let entry = this.cache?.get(hash);
    if (!entry) {
      entry = { id: await this.ask(key, call) };
      this.cache?.set(hash, entry);
    }
    if (!entry.id) throw new AppError('unauthorized', 'admin key is invalid, revoked or expired');
    return { kind: 'admin', admin_key_id: entry.id };
  }

  private async ask(key: string, call: Omit<CallContext, 'auth'>): Promise<string | null> {
    try {
      return (await this.rpc.call('admin.key.verify', { key }, { ...call, auth: { kind: 'service', service: 'gateway' } })).admin_key_id;
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') return null;
      throw err;
    }
  }
}
