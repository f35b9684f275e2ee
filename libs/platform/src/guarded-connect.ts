/**
 * The SSRF guard of outbound HTTP, at connect time: an undici connector (an Agent's `connect`)
 * that reaches permitted addresses only (IpPolicy). Every new connection is checked where its
 * address is known: literal IPs in the connector (Node does not call the lookup hook for them),
 * names in the socket's own DNS lookup hook, so the address checked is the address connected to
 * and DNS rebinding between a check and the connect is impossible. A refused destination makes
 * no connection at all. Used by webhooks' deliveries and by guardedFetch (attachments by URL,
 * SSO identity providers, the operator's alert webhook).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { ipLiteralOf, type IpPolicy } from './ip-policy';

export class BlockedDestinationError extends Error {
  readonly code = 'E_BLOCKED_DESTINATION';
  constructor(host: string) {
    super(`${host} is not a public address`);
    this.name = 'BlockedDestinationError';
  }
}

/** Resolves a name to all its addresses (dns.lookup by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** A lookup hook for net/tls.connect that answers only with permitted addresses; a name with none at all is ENOTFOUND. */
export function guardedLookup(ips: IpPolicy, resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (all) => {
        const family = options.family === 'IPv6' ? 6 : options.family === 'IPv4' ? 4 : (options.family ?? 0);
        const candidates = family ? all.filter((a) => a.family === family) : all;
        const permitted = candidates.filter((a) => ips.permits(a.address));
        if (permitted.length === 0) {
          callback(candidates.length ? new BlockedDestinationError(hostname) : Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        // net.connect asks for every address (all: true) when it races IPv4 and IPv6 (autoSelectFamily).
        if (options.all) callback(null, permitted);
        else callback(null, permitted[0]!.address, permitted[0]!.family);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), '', 0),
    );
  };
}

export interface GuardedConnectOptions {
  /** Connect and TLS handshake, at most. */
  timeoutMs: number;
  resolver?: Resolver;
}

/** The `connect` of an undici Agent whose connections reach permitted addresses only. */
export function guardedConnector(ips: IpPolicy, opts: GuardedConnectOptions): buildConnector.connector {
  const base = buildConnector({ timeout: opts.timeoutMs, lookup: guardedLookup(ips, opts.resolver) });
  return (options, callback) => {
    // Node connects to what it reads as an address without the lookup: judge every host either
    // reading takes for one, so the two parsers never disagree in a caller's favour.
    const bare = options.hostname.replace(/^\[|\]$/g, '');
    const literal = ipLiteralOf(options.hostname) ?? (isIP(bare) ? bare : undefined);
    if (literal !== undefined && !ips.permits(literal)) {
      callback(new BlockedDestinationError(literal), null);
      return;
    }
    base(options, callback);
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
