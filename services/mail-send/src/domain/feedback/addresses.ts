/** Addresses and message ids in report text, found by scanning around '@' (linear). */
import { MAX_RECIPIENTS } from './limits';

const LOCAL_CHAR = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/;
const DOMAIN_CHAR = /[A-Za-z0-9.-]/;
const DOMAIN = /^[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,20}$/;

/** Addresses in a string, in order, found by scanning out from each '@' (linear); lower case unless `lower` is false. */
export function findAddresses(s: string, lower = true): string[] {
  const out: string[] = [];
  let at = s.indexOf('@');
  while (at !== -1 && out.length < MAX_RECIPIENTS) {
    let start = at;
    while (start > 0 && at - start < 256 && LOCAL_CHAR.test(s[start - 1] ?? '')) start--;
    let end = at + 1;
    while (end < s.length && end - at < 256 && DOMAIN_CHAR.test(s[end] ?? '')) end++;
    const local = s.slice(start, at).replace(/^[.=]+/, '');
    const domain = s.slice(at + 1, end).replace(/[.-]+$/, '');
    if (local && DOMAIN.test(domain) && /[A-Za-z]/.test(domain.slice(domain.lastIndexOf('.') + 1))) out.push(lower ? `${local}@${domain}`.toLowerCase() : `${local}@${domain}`);
    at = s.indexOf('@', end);
  }
  return out;
}

export function firstAddress(s: string): string | null {
  return findAddresses(s)[0] ?? null;
}

export function stripAngles(v: string): string | null {
  const m = /<([^<>\s]{1,998})>/.exec(v);
  const id = (m ? m[1] : v.trim().split(/\s/)[0]) ?? '';
  return id || null;
}

/** Senders of bounces. */
const DAEMON_SENDER = /^(?:mailer[-_]?daemon|mail-?daemon|post_?master|mdaemon|mail\.?delivery|double-bounce|mailman-bounces)$/i;

export function isDaemonSender(a: string): boolean {
  return DAEMON_SENDER.test(a.slice(0, a.indexOf('@')));
}

/** Never a failed recipient (postmaster can be: mail to postmaster@ bounces too). */
export function isMailerDaemon(a: string): boolean {
  return /^(?:mailer[-_]?daemon|mail-?daemon|double-bounce)$/i.test(a.slice(0, a.indexOf('@')));
}

export function unique(list: string[]): string[] {
  return [...new Set(list)].slice(0, MAX_RECIPIENTS);
}
