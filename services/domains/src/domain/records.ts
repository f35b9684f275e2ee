/**
 * The DNS records a custom domain needs, and what a check of each found. Required for
 * verification (the spec: "custom sending domains with DNS verification (SPF, DKIM,
 * optionally DMARC)"): SPF and DKIM. Recommended and reported: MX (mail to the domain's
 * inboxes), DMARC, and the bounce name (VERP envelope senders on the domain). Each rule reads
 * DNS answers, never raw packets: the port (ports.ts `DnsLookup`) resolves.
 */
import { BOUNCE_LABEL, type DomainRecord, type RecordKind, type RecordReason, type RecordStatus } from '@mailroom/contracts';
import type { DnsAnswer } from './ports';

/** What the platform's side of the records is: configuration (README, "Configuration"). */
export interface RecordSettings {
  /** Our inbound host, the MX target. */
  mxHost: string;
  /** The name our SPF record lives at: customers `include:` it. */
  spfInclude: string;
  /** Where DMARC aggregate reports go (`rua=mailto:`); null: none asked for. */
  dmarcRua: string | null;
  /** Our bounce domain, the target of the bounce CNAME. */
  bounceTarget: string;
}

/** A domain as its records need it. */
export interface DomainKeys {
  name: string;
  dkimSelector: string;
  /** base64 of the DER SubjectPublicKeyInfo (the `p=` of the DKIM record). */
  dkimPublicKey: string;
  /** A rotation's new key, until its record verifies and it replaces the current one. */
  next?: { selector: string; publicKey: string } | null;
}

export const MX_PRIORITY = 10;
export const REQUIRED_KINDS: readonly RecordKind[] = ['spf', 'dkim'];

/** What a check of one record found. */
export interface RecordCheck {
  status: Exclude<RecordStatus, 'pending'>;
  reason: RecordReason | null;
  found: string[];
  checked_at: string;
  /** SPF only: the one record to publish instead of the one found (ours merged into it). */
  advice?: string;
  /** A temporary failure's DNS error (ETIMEOUT, ESERVFAIL, ...). */
  error?: string;
}
export type Checks = Partial<Record<RecordKind, RecordCheck>>;

interface Expected {
  kind: RecordKind;
  type: DomainRecord['type'];
  name: string;
  value: string;
  priority: number | null;
  purpose: DomainRecord['purpose'];
}

export function spfValue(s: RecordSettings): string {
  return `v=spf1 include:${s.spfInclude} ~all`;
}

export function dkimValue(publicKey: string): string {
  return `v=DKIM1; k=rsa; p=${publicKey}`;
}

export function dmarcValue(s: RecordSettings): string {
  return s.dmarcRua ? `v=DMARC1; p=none; rua=mailto:${s.dmarcRua}` : 'v=DMARC1; p=none';
}

function expected(d: DomainKeys, s: RecordSettings): Expected[] {
  return [
    { kind: 'mx', type: 'MX', name: d.name, value: s.mxHost, priority: MX_PRIORITY, purpose: 'receiving' },
    { kind: 'spf', type: 'TXT', name: d.name, value: spfValue(s), priority: null, purpose: 'sending' },
    { kind: 'dkim', type: 'TXT', name: `${d.dkimSelector}._domainkey.${d.name}`, value: dkimValue(d.dkimPublicKey), priority: null, purpose: 'signing' },
    { kind: 'dmarc', type: 'TXT', name: `_dmarc.${d.name}`, value: dmarcValue(s), priority: null, purpose: 'policy' },
    { kind: 'bounce', type: 'CNAME', name: `${BOUNCE_LABEL}.${d.name}`, value: s.bounceTarget, priority: null, purpose: 'bounces' },
    ...(d.next ? [{ kind: 'dkim_next', type: 'TXT', name: `${d.next.selector}._domainkey.${d.name}`, value: dkimValue(d.next.publicKey), priority: null, purpose: 'signing' } as const] : []),
  ];
}

/** The records to publish, each with its last check (an SPF record already there gets the merged one as its value). */
export function recordsOf(d: DomainKeys, s: RecordSettings, checks: Checks): DomainRecord[] {
  return expected(d, s).map((e) => {
    const check = checks[e.kind];
    return {
      ...e,
      value: check?.advice ?? e.value,
      required: REQUIRED_KINDS.includes(e.kind),
      status: check?.status ?? 'pending',
      reason: check?.reason ?? null,
      found: check?.found ?? [],
      checked_at: check?.checked_at ?? null,
    };
  });
}

/** Where each record is looked up, and how (`dkim_next` only while a rotation is pending). */
export function lookupsOf(d: DomainKeys): Record<Exclude<RecordKind, 'dkim_next'>, { type: DomainRecord['type']; name: string }> & { dkim_next?: { type: 'TXT'; name: string } } {
  return {
    mx: { type: 'MX', name: d.name },
    spf: { type: 'TXT', name: d.name },
    dkim: { type: 'TXT', name: `${d.dkimSelector}._domainkey.${d.name}` },
    dmarc: { type: 'TXT', name: `_dmarc.${d.name}` },
    bounce: { type: 'CNAME', name: `${BOUNCE_LABEL}.${d.name}` },
    ...(d.next ? { dkim_next: { type: 'TXT', name: `${d.next.selector}._domainkey.${d.name}` } } : {}),
  };
}

const host = (name: string) => name.toLowerCase().replace(/\.$/, '');

function verified(at: string): RecordCheck {
  return { status: 'verified', reason: null, found: [], checked_at: at };
}
function missing(at: string): RecordCheck {
  return { status: 'failed', reason: 'missing', found: [], checked_at: at };
}
function mismatch(at: string, found: string[], advice?: string): RecordCheck {
  return { status: 'failed', reason: 'mismatch', found, checked_at: at, ...(advice ? { advice } : {}) };
}
function temporary(at: string, error: string): RecordCheck {
  return { status: 'temporary_failure', reason: 'temporary_failure', found: [], checked_at: at, error };
}

/** Our include put into the customer's one SPF record, before its `all` (or `redirect=`), else at its end. */
export function mergeSpf(record: string, include: string): string {
  const terms = record.trim().split(/\s+/);
  const at = terms.findIndex((t, i) => i > 0 && (/^[-+~?]?all$/i.test(t) || /^redirect=/i.test(t)));
  const term = `include:${include}`;
  if (at === -1) return [...terms, term].join(' ');
  return [...terms.slice(0, at), term, ...terms.slice(at)].join(' ');
}

export function checkSpf(answer: DnsAnswer<string>, s: RecordSettings, at: string): RecordCheck {
  if (answer.kind === 'temporary') return temporary(at, answer.error);
  const spf = answer.kind === 'found' ? answer.values.filter((t) => /^v=spf1(\s|$)/i.test(t.trim())) : [];
  if (spf.length === 0) return missing(at);
  // RFC 7208 4.5: two SPF records are a permanent error for every receiver; merge them into one.
  if (spf.length > 1) return mismatch(at, spf, mergeSpf(spf[0]!, s.spfInclude));
  const ours = `include:${s.spfInclude}`.toLowerCase();
  const record = spf[0]!;
  if (record.trim().split(/\s+/).some((t) => t.toLowerCase() === ours || t.toLowerCase() === `+${ours}`)) return verified(at);
  return mismatch(at, spf, mergeSpf(record, s.spfInclude));
}

/** The tags of a DKIM key record (RFC 6376 3.6.1), whitespace inside values removed. */
function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

export function checkDkim(answer: DnsAnswer<string>, publicKey: string, at: string): RecordCheck {
  if (answer.kind === 'temporary') return temporary(at, answer.error);
  if (answer.kind === 'none' || answer.values.length === 0) return missing(at);
  if (answer.values.some((r) => dkimTags(r).get('p') === publicKey)) return verified(at);
  return mismatch(at, answer.values);
}

export function checkDmarc(answer: DnsAnswer<string>, at: string): RecordCheck {
  if (answer.kind === 'temporary') return temporary(at, answer.error);
  const dmarc = answer.kind === 'found' ? answer.values.filter((t) => /^v=DMARC1\s*(;|$)/.test(t.trim())) : [];
  if (dmarc.length === 0) return missing(at);
  // RFC 7489 6.6.3: more than one record means no policy at all.
  if (dmarc.length > 1) return mismatch(at, dmarc);
  return verified(at);
}

export function checkMx(answer: DnsAnswer<{ exchange: string; priority: number }>, s: RecordSettings, at: string): RecordCheck {
  if (answer.kind === 'temporary') return temporary(at, answer.error);
  if (answer.kind === 'none' || answer.values.length === 0) return missing(at);
  if (answer.values.some((mx) => host(mx.exchange) === host(s.mxHost))) return verified(at);
  return mismatch(at, answer.values.map((mx) => `${mx.priority} ${host(mx.exchange)}`));
}

export function checkBounce(answer: DnsAnswer<string>, s: RecordSettings, at: string): RecordCheck {
  if (answer.kind === 'temporary') return temporary(at, answer.error);
  if (answer.kind === 'none' || answer.values.length === 0) return missing(at);
  if (answer.values.some((t) => host(t) === host(s.bounceTarget))) return verified(at);
  return mismatch(at, answer.values.map(host));
}
