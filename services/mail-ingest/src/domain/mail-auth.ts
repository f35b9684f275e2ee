/**
 * Inbound mail authentication: the SPF, DKIM, DMARC and ARC verdicts of one received message.
 * mailauth does the checking (through the DNS resolver of src/clients/dns-resolver.ts); this module
 * owns the time bound on the whole check and how mailauth's results become the plain verdicts
 * mail-ingest keeps.
 *
 * mailauth runs in its strict mode, which applies the RFCs (7208, 6376, 8301, 8463, 8617, DMARC)
 * as written instead of its lenient defaults: on the public test suites it scores SPF 195/200
 * instead of 188 and ARC 169/171 instead of 166 (see the *-corpus specs). The price: rsa-sha1
 * signatures get policy (RFC 8301), SPF records with syntax slips get permerror, and an `mta`
 * that is not a valid authserv-id (a host name is) makes mailauth throw, so every verdict is
 * temperror: check it with the configuration.
 *
 * From mailauth's results to verdicts:
 * - SPF: its result as it is; details: mailauth's explanation.
 * - DKIM, one result per signature: pass if any signature passes, details the passing d=
 *   domains. Otherwise the most telling of the others, in this order: temperror (a retry may
 *   pass), fail (bad signature or body hash), policy (rsa-sha1, key under 1024 bits),
 *   permerror, neutral (could not be checked, e.g. no key or a malformed signature); details
 *   list every signature. An unsigned message is none.
 * - DMARC: its result as it is; details: the policy that applies (p=, or sp=/np= for a
 *   subdomain). Not evaluated because From has no single author domain: none, details why.
 * - ARC: pass, fail or none as they are; details: the chain length, or why it failed.
 * - mailauth's `temperr` is temperror. `skipped` and `declined` are BIMI's, which is off.
 * - Over the time limit, or mailauth threw: temperror for all four. Neither says anything about
 *   the sender, and temperror is the one verdict that claims nothing.
 */
import { authenticate, type AuthenticateResult, type AuthStatus, type DKIMResult, type DNSResolver } from 'mailauth';

export type VerdictResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror' | 'policy';

export interface Verdict {
  result: VerdictResult;
  details?: string;
}

export interface MailAuthVerdicts {
  spf: Verdict;
  dkim: Verdict;
  dmarc: Verdict;
  arc: Verdict;
}

/** A received message and its SMTP envelope, as authentication needs them. */
export interface MailToAuthenticate {
  raw: Buffer;
  /** The connecting client's address. */
  ip: string;
  helo: string;
  /** The envelope sender; '' for a bounce (null reverse-path), SPF then checks the HELO name. */
  mailFrom: string;
  /** Our own host name, the authserv-id of the results. */
  mta: string;
}

export interface MailAuthOptions {
  resolve: DNSResolver;
  /** The whole check; past it every verdict is temperror. */
  timeoutMs: number;
}

export async function checkMailAuth(mail: MailToAuthenticate, opts: MailAuthOptions): Promise<MailAuthVerdicts> {
  const deadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), opts.timeoutMs);
  });
  try {
    // Promise.race also takes care of a rejection that comes after the time limit.
    const outcome = await Promise.race([
      authenticate(mail.raw, {
        ip: mail.ip,
        helo: mail.helo,
        sender: mail.mailFrom,
        mta: mail.mta,
        resolver: boundedResolver(opts.resolve, deadline.signal),
        disableBimi: true,
        strict: true,
      }),
      timedOut,
    ]);
    if (outcome === 'timed out') {
      deadline.abort();
      return allTemperror(`not finished within ${opts.timeoutMs} ms`);
    }
    return {
      spf: spfVerdict(outcome.spf),
      dkim: dkimVerdict(outcome.dkim.results),
      dmarc: dmarcVerdict(outcome),
      arc: arcVerdict(outcome.arc),
    };
  } catch (err) {
    return allTemperror(`mailauth failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Past the deadline a check that is still running gets a timeout for every new query, which
 * mailauth turns into temperror, so it winds down instead of waiting on DNS for nothing.
 */
function boundedResolver(resolve: DNSResolver, deadline: AbortSignal): DNSResolver {
  return async (name, rrtype) => {
    if (deadline.aborted) throw Object.assign(new Error(`query ${rrtype} ${name} after the time limit`), { code: 'ETIMEOUT' });
    return resolve(name, rrtype);
  };
}

function allTemperror(details: string): MailAuthVerdicts {
  const verdict: Verdict = { result: 'temperror', details };
  return { spf: verdict, dkim: verdict, dmarc: verdict, arc: verdict };
}

function verdictResult(result: AuthStatus['result']): VerdictResult {
  switch (result) {
    case 'temperr':
      return 'temperror';
    case 'skipped':
    case 'declined':
      return 'none';
    default:
      return result;
  }
}

function spfVerdict(spf: AuthenticateResult['spf']): Verdict {
  if (!spf) return { result: 'none' };
  return withDetails(verdictResult(spf.status.result), spf.status.comment);
}

/** Why a signature that did not pass failed: the worst first. */
const DKIM_FAILURE_ORDER: VerdictResult[] = ['temperror', 'fail', 'policy', 'permerror', 'neutral'];

function dkimVerdict(results: DKIMResult[]): Verdict {
  // mailauth reports an unsigned message as one result, none, and never uses none otherwise.
  const signatures = results.filter((s) => s.status.result !== 'none');
  if (signatures.length === 0) return { result: 'none' };
  const passing = new Set(signatures.flatMap((s) => (s.status.result === 'pass' && s.signingDomain ? [s.signingDomain] : [])));
  if (passing.size > 0) return { result: 'pass', details: [...passing].join(', ') };

  const worst = DKIM_FAILURE_ORDER.find((r) => signatures.some((s) => verdictResult(s.status.result) === r)) ?? 'neutral';
  const details = signatures
    .map((s) => `${s.signingDomain ?? '?'}/${s.selector ?? '?'}: ${s.status.result}${s.status.comment ? ` (${s.status.comment})` : ''}`)
    .join('; ');
  return { result: worst, details };
}

function dmarcVerdict(outcome: AuthenticateResult): Verdict {
  if (!outcome.dmarc) return withDetails('none', outcome.dmarcSkipReason && `not evaluated: ${outcome.dmarcSkipReason}`);
  const { status, policy, testMode } = outcome.dmarc;
  return withDetails(verdictResult(status.result), policy && `p=${policy}${testMode ? ' (t=y)' : ''}`);
}

function arcVerdict(arc: AuthenticateResult['arc']): Verdict {
  if (!arc) return { result: 'none' };
  const result = verdictResult(arc.status.result);
  return withDetails(result, result === 'pass' && arc.i ? `i=${arc.i}` : arc.status.comment);
}

function withDetails(result: VerdictResult, details: string | false | undefined): Verdict {
  return details ? { result, details } : { result };
}
