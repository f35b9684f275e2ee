/**
 * Outbound HTTP to addresses others name (organizations' identity providers, the operator's
 * alert webhook, attachments by URL): fetch through the connect-time SSRF guard
 * (guarded-connect.ts). Redirects are not followed; one deadline covers a call. Non-public
 * ranges are reachable only when the operator allows them (development and tests).
 */
import { Agent, fetch as undiciFetch } from 'undici';
import { guardedConnector } from './guarded-connect';
import type { IpPolicy } from './ip-policy';

export type GuardedFetch = (url: string | URL, init?: RequestInit & { signal?: AbortSignal | null }) => Promise<Response>;

/** A fetch whose connections reach permitted addresses only, ending at `timeoutMs` (or the caller's signal, first). */
export function guardedFetch(ips: IpPolicy, timeoutMs: number): GuardedFetch {
  const agent = new Agent({ connect: guardedConnector(ips, { timeoutMs }), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  return async (url, init = {}) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    // undici's own Response: openid-client accepts it (its checks are by type tag).
    const res = await undiciFetch(url, { ...(init as object), redirect: 'manual', signal, dispatcher: agent } as Parameters<typeof undiciFetch>[1]);
    return res as unknown as Response;
  };
}
