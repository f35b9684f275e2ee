/**
 * Outbound HTTP to addresses others name (organizations' identity providers, the operator's
 * alert webhook): the SSRF guard of webhooks' deliveries (IpPolicy). Every new connection is
 * checked where its address is known: literal IPs in the connector, names in the socket's DNS
 * lookup hook, so the address checked is the address connected to (no DNS rebinding between
 * a check and the connect). Redirects are not followed; one deadline covers a call.
 * Non-public ranges are reachable only when the operator allows them (development and tests).
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { ipLiteralOf, type IpPolicy } from './ip-policy';

export class BlockedDestinationError extends Error {
  readonly code = 'E_BLOCKED_DESTINATION';
  constructor(host: string) {
    super(`${host} is not a public address`);
    this.name = 'BlockedDestinationError';
  }
}

/** A lookup hook for net/tls.connect that answers only with permitted addresses. */
function guardedLookup(ips: IpPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, all) => {
      if (err) return callback(err, '', 0);
      const family = options.family === 'IPv6' ? 6 : options.family === 'IPv4' ? 4 : (options.family ?? 0);
      const candidates = family ? all.filter((a) => a.family === family) : all;
      const permitted = candidates.filter((a) => ips.permits(a.address));
      if (permitted.length === 0) return callback(new BlockedDestinationError(hostname), '', 0);
      if (options.all) callback(null, permitted);
      else callback(null, permitted[0]!.address, permitted[0]!.family);
    });
  };
}

export type GuardedFetch = (url: string | URL, init?: RequestInit & { signal?: AbortSignal | null }) => Promise<Response>;

/** A fetch whose connections reach permitted addresses only, ending at `timeoutMs` (or the caller's signal, first). */
export function guardedFetch(ips: IpPolicy, timeoutMs: number): GuardedFetch {
  const base = buildConnector({ timeout: timeoutMs, lookup: guardedLookup(ips) });
  const agent = new Agent({
    connect: (options, callback) => {
      const bare = options.hostname.replace(/^\[|\]$/g, '');
      const literal = ipLiteralOf(options.hostname) ?? (isIP(bare) ? bare : undefined);
      if (literal !== undefined && !ips.permits(literal)) return callback(new BlockedDestinationError(literal), null);
      base(options, callback);
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return async (url, init = {}) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    // undici's own Response: openid-client accepts it (its checks are by type tag).
    const res = await undiciFetch(url, { ...(init as object), redirect: 'manual', signal, dispatcher: agent } as Parameters<typeof undiciFetch>[1]);
    return res as unknown as Response;
  };
}

/** Whether `err` (or a cause of it) is the guard's refusal. */
export function isBlocked(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    if (e instanceof BlockedDestinationError) return true;
    e = typeof e === 'object' && 'cause' in e ? (e as { cause: unknown }).cause : undefined;
  }
  return false;
}
