/**
 * Codes and classification: a recipient's enhanced status (RFC 3463) and SMTP reply code, and
 * what they make of it. Permanent = 5.x.x (or a 5yz reply), Transient = 4.x.x (4yz) or a delay;
 * sub type NoEmail for "mailbox does not exist", Suppressed for suppression-list refusals.
 */
import { MAX_DIAGNOSTIC_CHARS, MAX_RECIPIENTS } from './limits';
import type { BounceSubType, BounceType, DsnAction, DsnRecipient } from './types';

/** Enhanced status code (RFC 3463): class 2/4/5, subject 0-7; not part of an IP address or version number. */
export const ENHANCED = /(?<![\w./-])([245])\.([0-7])\.(\d{1,3})(?![\w/-]|\.\d)/;
const ENHANCED_G = new RegExp(ENHANCED.source, 'g');
/** SMTP reply code where replies start: line start, after "said:", "<<<", a colon, a bracket, ... */
export const REPLY = /(?:^|[\s:(<>"'[=]|said)([245][0-5]\d)(?=[\s-]|$|[.,;:)\]])/;
const REPLY_G = new RegExp(REPLY.source, 'gm');

/** The first failure code, preferring a specific one to x.0.0. */
export function enhancedIn(text: string): string | null {
  let best: string | null = null;
  for (const m of text.matchAll(ENHANCED_G)) {
    if (m[1] === '2') continue;
    const code = `${m[1]}.${m[2]}.${m[3]}`;
    if (!best || (best.endsWith('.0.0') && !code.endsWith('.0.0') && code[0] === best[0])) best = code;
    if (!best.endsWith('.0.0')) break;
  }
  return best;
}

export function replyIn(text: string): string | null {
  for (const m of text.matchAll(REPLY_G)) if (!m[1]?.startsWith('2')) return m[1] ?? null;
  return null;
}

/** "Mailbox does not exist" in its many spellings. */
export const NO_MAILBOX =
  /user (?:unknown|not found|doesn'?t exist|does not exist)|unknown (?:user|recipient|mailbox|address|local[- ]?part)|no such (?:user|mailbox|recipient|address|account|person)|(?:mailbox|recipient|user|address|account|e-?mail address)(?: \S{1,80})? (?:does not exist|doesn'?t exist|not exist|is unknown|not found|is not found)|invalid (?:recipient|mailbox|address|user)|recipient (?:is )?invalid|not a valid (?:mailbox|user|recipient)|no mailbox|unrouteable address|user (?:account )?(?:is )?(?:not|no longer) (?:valid|available|active)|bad destination mailbox|mailbox not found|account (?:has been )?(?:disabled|deleted|removed|closed)|no account by that name|doesn'?t have an? (?:\S{1,60} )?account|not listed in (?:the )?(?:\S{1,30} )?directory|recipient (?:name )?is not recognized/i;

/** Refusals because the address is on a suppression list (the recipient's or an ESP's). */
const SUPPRESSED = /suppression list|\bsuppressed\b|do[- ]not[- ](?:send|mail|contact) list|previously (?:bounced|unsubscribed|complained)/i;

/** Temporary wording, used only where no code says otherwise. */
export const TRANSIENT_PHRASE = /temporar(?:y|ily)|try again later|will (?:be )?retr(?:y|ied)|still trying|delayed|deferred|greylist|not yet been delivered|will continue trying/i;

function inferStatus(digit: string, text: string): string {
  if (NO_MAILBOX.test(text)) return `${digit}.1.1`;
  if (/mailbox (?:is )?full|over quota|quota exceeded|insufficient (?:system )?storage|exceeded the (?:local )?limit/i.test(text)) return `${digit}.2.2`;
  if (/message (?:is )?too (?:big|large)|size (?:limit|exceeded)/i.test(text)) return `${digit}.3.4`;
  if (/host (?:not found|unknown)|unknown host|domain (?:not found|does not exist)|unrouteable|no mx|name service error/i.test(text)) return `${digit}.1.2`;
  if (/retry time(?:out)? (?:not reached|exceeded)|expired|too long|timed? ?out/i.test(text)) return `${digit}.4.7`;
  return `${digit}.0.0`;
}

export function subTypeOf(bounceType: BounceType | null, status: string, diagnostic: string): BounceSubType | null {
  if (bounceType === null) return null;
  if (bounceType === 'Transient') return 'General';
  if (SUPPRESSED.test(diagnostic)) return 'Suppressed';
  if (/^5\.1\.(?:1|10)$/.test(status)) return 'NoEmail';
  // Generic codes, address codes outside RFC 3463 (5.1.351) and "mailbox disabled" (5.2.1) take
  // the wording; a specific code for something else (policy, content, quota, routing) does not.
  if (/^5\.(?:0\.\d{1,3}|5\.\d{1,3}|1\.0|1\.\d{3}|2\.1)$/.test(status) && NO_MAILBOX.test(diagnostic)) return 'NoEmail';
  return 'General';
}

/**
 * One recipient's verdict. The enhanced status decides the type, then the reply code, then
 * `fallback` (what the report as a whole says: a failure notice or a delay warning). A
 * missing status is derived from the type and the wording.
 */
export function recipientOf(address: string, action: DsnAction, statusIn: string | null, reply: string | null, diagnostic: string, fallback: BounceType, wording = diagnostic): DsnRecipient {
  const diag = diagnostic.replace(/\s+/g, ' ').trim().slice(0, MAX_DIAGNOSTIC_CHARS);
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') {
    return { address, action, status: statusIn ?? '2.0.0', diagnosticCode: diag, bounceType: null, bounceSubType: null };
  }
  const cls = statusIn?.[0] ?? reply?.[0];
  const bounceType: BounceType = action === 'delayed' ? 'Transient' : cls === '5' ? 'Permanent' : cls === '4' ? 'Transient' : fallback;
  const status = statusIn ?? inferStatus(bounceType === 'Permanent' ? '5' : '4', wording);
  return { address, action, status, diagnosticCode: diag, bounceType, bounceSubType: subTypeOf(bounceType, status, wording) };
}

export function dedupeRecipients(list: DsnRecipient[]): DsnRecipient[] {
  const seen = new Map<string, DsnRecipient>();
  for (const r of list) {
    const prev = seen.get(r.address);
    if (!prev || (prev.bounceType !== 'Permanent' && r.bounceType === 'Permanent')) seen.set(r.address, r); // the most severe entry wins
  }
  return [...seen.values()].slice(0, MAX_RECIPIENTS);
}
