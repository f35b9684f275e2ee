/**
 * SPF, DKIM, DMARC and ARC verdicts of an inbound message (mailauth), bounded in time:
 * past AUTH_TIMEOUT_MS every check that has not answered is a temperror, never a hang.
 * DNS goes through a resolver we configure (DNS_SERVERS), so tests use a server on
 * loopback and production can point at a validating local resolver.
 */
import { Resolver } from 'node:dns/promises';
import { authenticate as mailauth, type AuthStatus, type DNSResolver } from 'mailauth';
import type { AuthResults, AuthVerdict } from '@mailroom/contracts';
import type { Authenticate } from './acceptance';

export function createResolver(opts: { servers: string[]; timeoutMs: number }): DNSResolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: 2 });
  if (opts.servers.length) resolver.setServers(opts.servers);
  // mailauth asks for TXT, A, AAAA, MX, CNAME and PTR records exactly as dns.promises.resolve answers them.
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>;
}

type Result = AuthVerdict['result'];

/** mailauth's results, in our vocabulary. */
export function verdictOf(status: AuthStatus | undefined, details?: string): AuthVerdict {
  const map: Record<AuthStatus['result'], Result> = {
    pass: 'pass',
    fail: 'fail',
    softfail: 'softfail',
    neutral: 'neutral',
    none: 'none',
    temperror: 'temperror',
    temperr: 'temperror',
    permerror: 'permerror',
    policy: 'policy',
    skipped: 'none',
    declined: 'none',
  };
  const result = status ? map[status.result] : 'none';
  const text = details ?? status?.comment;
  return text ? { result, details: text.slice(0, 300) } : { result };
}

const NONE: AuthVerdict = { result: 'none' };
const TEMP = (why: string): AuthVerdict => ({ result: 'temperror', details: why });

export function createAuthenticator(resolver: DNSResolver, opts: { mta: string; timeoutMs: number }): Authenticate {
  return async ({ raw, ip, helo, mailFrom }) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        mailauth(raw, { ip, helo, sender: mailFrom, mta: opts.mta, resolver, trustReceived: false }),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
        }),
      ]);
      if (result === 'timeout') {
        const why = `checks took longer than ${opts.timeoutMs} ms`;
        return { spf: TEMP(why), dkim: TEMP(why), dmarc: TEMP(why), arc: TEMP(why) };
      }
      const signatures = result.dkim.results;
      const passing = signatures.filter((s) => s.status?.result === 'pass');
      let dkim: AuthVerdict = NONE;
      if (passing.length) dkim = { result: 'pass', details: passing.map((s) => s.signingDomain).filter(Boolean).join(', ') };
      else if (signatures.length) dkim = verdictOf(signatures[0]!.status, signatures[0]!.status?.comment);
      const auth: AuthResults = {
        spf: result.spf ? verdictOf(result.spf.status) : NONE,
        dkim,
        dmarc: result.dmarc ? verdictOf(result.dmarc.status, `p=${result.dmarc.p || 'none'}`) : NONE,
        arc: result.arc ? verdictOf(result.arc.status) : NONE,
      };
      return auth;
    } catch (err) {
      const why = `checks failed: ${err instanceof Error ? err.message.slice(0, 120) : 'unknown error'}`;
      return { spf: TEMP(why), dkim: TEMP(why), dmarc: TEMP(why), arc: TEMP(why) };
    } finally {
      clearTimeout(timer);
    }
  };
}
