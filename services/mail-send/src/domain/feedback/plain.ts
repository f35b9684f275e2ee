/**
 * The plain-text bounces of MTAs and providers that send no DSN (qmail, Exim, old Sendmail,
 * Gmail, Yahoo, Exchange, carriers, ...), with general rules, no per-vendor parser: a line that
 * starts with an address opens that recipient's block; the block's SMTP reply code and enhanced
 * status code are its diagnosis; phrases decide only where the MTA gave no code.
 */
import { findAddresses, firstAddress, isDaemonSender, isMailerDaemon, unique } from './addresses';
import { dedupeRecipients, ENHANCED, enhancedIn, NO_MAILBOX, recipientOf, REPLY, replyIn, TRANSIENT_PHRASE } from './classify';
import { MAX_DIAGNOSTIC_CHARS, MAX_LINE_CHARS, MAX_RECIPIENTS } from './limits';
import type { Report } from './report';
import type { BounceType, DsnAction, DsnFeedback } from './types';

const BOUNCE_SUBJECT =
  /undeliver|delivery (?:status|fail|report|notification|problem|has failed|error)|returned mail|failure notice|mail delivery failed|delivery failure|non[- ]?delivery|could(?: not|n't) be delivered|not delivered|mail system error|warning: could not send|delayed mail|return(?:ing|ed)(?: message)? to sender|mail failed|failed mail|error sending message|rejected|nondeliverable|mail failure|unzustellbar|non remis|no entregado|配信|不達|エラー|戻りメール|送信失敗/i;

const FAILURE_PHRASE =
  /could(?: not|n't) be delivered|was(?: not|n't) delivered|delivery (?:to the following|has failed|failed|failure|problem|is delayed)|permanent(?:ly)? (?:error|fail)|fatal error|unable to deliver|undeliverable|not be delivered|following address(?:es)?(?: had| failed)|failed permanently|wasn't able to deliver|returned to sender|message could not|rejected|did not reach|no se pudo|konnte nicht|n'a pas pu|has not been delivered|not deliverable|failed addresses|no valid recipients|unknown host|host unknown|user unknown/i;

const AUTOREPLY_SUBJECT = /^(?:auto(?:matic)?[ -]?(?:reply|response|antwort)|out of (?:the )?office|away|vacation|abwesen|absence|autorespond)/i;

/**
 * Is this a bounce at all? A failure report (X-Failed-Recipients, report-type=delivery-status),
 * or a daemon or null sender or a bounce subject, together with failure wording or an SMTP code.
 * Auto-replies (RFC 3834 vacation notices) from people are not.
 */
function looksLikeBounce(report: Report, notice: string): boolean {
  if (report.top.has('x-failed-recipients') || /report-type\s*=\s*"?delivery-status/i.test(report.top.get('content-type') ?? '')) return true;
  const fromField = report.top.get('from') ?? '';
  // Bounces come from a daemon, or at least with the null reverse-path (RFC 5321 4.5.5).
  const daemon =
    (report.fromAddress !== null && isDaemonSender(report.fromAddress)) ||
    /^\s*<>\s*$|mail delivery|mailer.daemon|postmaster|mail administrator|mail system|delivery subsystem/i.test(fromField) ||
    /^\s*<>\s*$/.test(report.top.get('return-path') ?? '');
  if (!daemon && AUTOREPLY_SUBJECT.test(report.subject)) return false;
  const evidence = FAILURE_PHRASE.test(notice) || ENHANCED.test(notice) || REPLY.test(notice);
  return (daemon && (evidence || BOUNCE_SUBJECT.test(report.subject))) || (BOUNCE_SUBJECT.test(report.subject) && evidence);
}

/**
 * A line that names a recipient: it starts with the address ("addr", "<addr>:", '"addr":',
 * "addr... reason", "addr (reason)", "550 <addr>... reason"), maybe after a label such as
 * "Recipient address:" or "RCPT TO:".
 */
const RECIPIENT_LINE =
  /^[\s>*"'(-]{0,12}(?:[245]\d\d[ -])?(?:(?:RCPT TO|Recipient(?:\(s\))?|Recipient address|Original-Recipient|Failed recipient|Address|Adresse|Empf\u00e4nger|宛先|受信者)\s{0,4}:?\s{0,20})?<?"?([A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,256}@[A-Za-z0-9.-]{1,256})/i;
/** Header lines echoed in a notice: their addresses are the sender's or routing's, not a failed recipient's. */
const ECHO_LINE = /^\s*(?:From|Reply-To|Sender|Return-Path|Message-I[Dd]|Received|References|In-Reply-To|Envelope-From|X-[A-Za-z-]+)\s*:|^\s*(?:by|for|from|with|id)\s/i;

interface Block {
  address: string;
  text: string;
}

/**
 * The recipients of a plain-text notice, each with its block of text.
 * 1. Strong: a line that starts with an address opens its block, which runs to the next such
 *    line (qmail "<addr>:", Exim's indented address, Sendmail "<addr>... reason", Postfix,
 *    Gmail, Exchange "addr on <date>", "Recipient address: addr", "550 <addr>... reason").
 * 2. Weak, when every strong one is the sender: any other address in the notice that is not
 *    the sender's, a daemon's or in an echoed header ("undeliverable to addr", "Delivery
 *    failed 20 attempts: addr"), preferring those the original message was addressed to.
 * 3. The sender itself when nothing else is named (a message to oneself).
 */
function recipientBlocks(notice: string, exclude: Set<string>, originalTo: Set<string>): Block[] {
  const lines = notice.split('\n').map((l) => l.slice(0, MAX_LINE_CHARS));
  const strong = new Map<string, Block>();
  let current: Block | undefined;
  for (const line of lines) {
    const m = line.includes('@') ? RECIPIENT_LINE.exec(line) : null;
    const address = m ? firstAddress(m[1] ?? '') : null;
    if (address && !isMailerDaemon(address) && strong.size < MAX_RECIPIENTS) {
      current = strong.get(address) ?? { address, text: '' };
      strong.set(address, current);
      current.text += `\n${line.trim()}`;
    } else if (current && current.text.length < MAX_DIAGNOSTIC_CHARS * 4) current.text += `\n${line}`;
  }
  const named = [...strong.values()].filter((b) => !exclude.has(b.address));
  if (named.length > 0) return named;
  const weak = new Map<string, Block>();
  lines.forEach((line, i) => {
    if (!line.includes('@') || ECHO_LINE.test(line)) return;
    for (const address of findAddresses(line)) {
      if (exclude.has(address) || isMailerDaemon(address) || weak.has(address) || weak.size >= MAX_RECIPIENTS) continue;
      weak.set(address, { address, text: lines.slice(i, i + 12).join('\n') });
    }
  });
  const addressed = [...weak.values()].filter((b) => originalTo.has(b.address));
  if (addressed.length > 0) return addressed;
  return weak.size > 0 ? [...weak.values()] : [...strong.values()];
}

const DELAY_SUBJECT = /\bdelay|will (?:be )?retr(?:y|ied)|still trying|not yet been delivered|warning:/i;
const DELAY_NOTICE = /warning message only|only a temporary failure|delivery (?:is|has been) delayed|will (?:be )?retr(?:y|ied)|still (?:be )?trying|will continue (?:to )?try/i;

export function readPlainBounce(report: Report): DsnFeedback | null {
  const notice = report.notice();
  if (!looksLikeBounce(report, notice)) return null;
  const original = report.originalHeaders();
  const exclude = new Set<string>();
  for (const name of ['to', 'from', 'reply-to', 'sender', 'return-path']) for (const a of report.top.all(name).flatMap((v) => findAddresses(v))) exclude.add(a);
  for (const name of ['from', 'return-path', 'sender', 'reply-to']) for (const a of (original?.all(name) ?? []).flatMap((v) => findAddresses(v))) exclude.add(a);
  const originalTo = [...(original?.all('to') ?? []), ...(original?.all('cc') ?? [])].flatMap((v) => findAddresses(v));
  let blocks = recipientBlocks(notice, exclude, new Set(originalTo));
  // Exim and Gmail name the failed recipients in a header: it settles who they are.
  const failed = (report.top.get('x-failed-recipients') ?? '').split(',').flatMap((v) => findAddresses(v));
  if (failed.length > 0) {
    const byAddress = new Map(blocks.map((b) => [b.address, b]));
    blocks = unique(failed).map((a) => byAddress.get(a) ?? { address: a, text: '' });
  }
  if (blocks.length === 0) {
    const to = unique(originalTo.filter((a) => !exclude.has(a)));
    if (to.length === 1 && to[0]) blocks = [{ address: to[0], text: '' }]; // the original's only recipient
  }
  const noticeStatus = enhancedIn(notice);
  const noticeReply = replyIn(notice);
  const delayed = DELAY_SUBJECT.test(report.subject) || DELAY_NOTICE.test(notice);
  const recipients = blocks.map((b) => {
    const diagnostic = (b.text.trim() || mainLine(notice)).slice(0, MAX_DIAGNOSTIC_CHARS * 2);
    const status = enhancedIn(b.text) ?? noticeStatus;
    const reply = replyIn(b.text) ?? noticeReply;
    const permanentCode = status?.startsWith('5') || (!status && reply?.startsWith('5'));
    const action: DsnAction = delayed && !permanentCode ? 'delayed' : 'failed';
    // No code at all: a returned message is a permanent failure unless the wording is temporary.
    const wording = `${diagnostic}\n${notice}`;
    const fallback: BounceType = delayed || (TRANSIENT_PHRASE.test(wording) && !/permanent/i.test(notice)) ? 'Transient' : 'Permanent';
    return recipientOf(b.address, action, status, reply, diagnostic, fallback, status || reply ? diagnostic : wording);
  });
  return {
    kind: 'dsn',
    recipients: dedupeRecipients(recipients),
    envelopeId: null,
    originalMessageId: report.originalMessageId(),
    reportingMta: null,
    verpToken: report.verpToken(),
  };
}

/** The notice's most telling line: one with a code, else one with failure wording. */
function mainLine(notice: string): string {
  const lines = notice.split('\n').map((l) => l.slice(0, MAX_LINE_CHARS));
  return (lines.find((l) => ENHANCED.test(l) || REPLY.test(l)) ?? lines.find((l) => FAILURE_PHRASE.test(l) || NO_MAILBOX.test(l)) ?? '').trim();
}
