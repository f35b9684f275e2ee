/** The DNS resolver mail authentication queries (SPF, DKIM keys, DMARC, ARC), from configuration. */
import { Resolver } from 'node:dns/promises';
import type { DNSResolver } from 'mailauth';

export interface ResolverOptions {
  /** 'host:port' or 'host' entries (DNS_SERVERS); the system's resolvers when left out. */
  servers?: string[];
  /**
   * The first attempt's; c-ares doubles it on each retry (measured on Node 24: 500 ms with 3
   * tries gave up after 3.5 s), which is one reason the whole check has its own bound.
   */
  timeoutMs: number;
  /** Attempts per query; one lost UDP packet should not turn into a temperror. */
  tries?: number;
}

export interface MailAuthResolver {
  /** Called by mailauth as it would call dns.promises.resolve, its default. */
  resolve: DNSResolver;
  /** Ends every query still in flight (ECANCELLED): at shutdown, after the last check. */
  cancel(): void;
}

/** One resolver for the process, created from configuration and shared by every check. */
export function createResolver(opts: ResolverOptions): MailAuthResolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: opts.tries ?? 2 });
  if (opts.servers?.length) resolver.setServers(opts.servers);
  return {
    // mailauth reads MX answers as { exchange, priority } objects, which its DNSResolver type
    // leaves out; so the method itself is handed over, not a wrapper retyped to fit.
    resolve: resolver.resolve.bind(resolver),
    cancel: () => resolver.cancel(),
  };
}
