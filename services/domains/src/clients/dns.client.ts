/**
 * DNS lookups of the checks through node:dns's Resolver (c-ares) and the configured servers
 * (DNS_SERVERS; the system's when empty). "No such name" and "no such record" are answers
 * (none); a timeout, SERVFAIL, a refusal or a connection failure is a temporary failure.
 */
import { Resolver } from 'node:dns/promises';
import type { DnsAnswer, DnsLookup } from '../domain/ports';

const NONE = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

export interface DnsClientOptions {
  /** 'host:port' or 'host' entries; the system's resolvers when empty. */
  servers: string[];
  /** The first attempt's; c-ares doubles it on each retry. */
  timeoutMs: number;
  tries: number;
}

export interface DnsClient extends DnsLookup {
  /** Ends every query in flight (ECANCELLED): at shutdown. */
  cancel(): void;
}

async function answer<T>(lookup: () => Promise<T[]>): Promise<DnsAnswer<T>> {
  try {
    const values = await lookup();
    return values.length ? { kind: 'found', values } : { kind: 'none' };
  } catch (err) {
    // Not `instanceof Error`: node:dns's errors may come from another realm (a vm context, as under jest).
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'unknown';
    if (NONE.has(code)) return { kind: 'none' };
    return { kind: 'temporary', error: code };
  }
}

export function createDnsClient(opts: DnsClientOptions): DnsClient {
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: opts.tries });
  if (opts.servers.length) resolver.setServers(opts.servers);
  return {
    // A TXT record comes as its character-strings; a record's text is them joined (RFC 7208 3.3, RFC 6376 3.6.2.2).
    txt: (name) => answer(async () => (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''))),
    mx: (name) => answer(() => resolver.resolveMx(name)),
    cname: (name) => answer(() => resolver.resolveCname(name)),
    cancel: () => resolver.cancel(),
  };
}
