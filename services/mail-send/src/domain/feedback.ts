/**
 * Delivery reports and complaint reports -> structured feedback about mail we sent.
 *
 * Owns reading, from the raw bytes of a message that came back to us:
 * - RFC 3464 delivery status notifications (multipart/report with message/delivery-status or
 *   the RFC 6533 global form; also DSN fields pasted into a text part);
 * - RFC 5965 ARF complaints (message/feedback-report), and the vendor formats that are not
 *   ARF: Amazon SES notifications mailed by SNS (JSON: Bounce, Complaint, Delivery),
 *   Microsoft JMRP junk reports, Apple Mail's unsubscribe request;
 * - the plain-text bounces of MTAs and providers that send no DSN (qmail, Exim, old Sendmail,
 *   Gmail, Yahoo, Exchange, carriers, ...), with general rules, no per-vendor parser: a line
 *   that starts with an address opens that recipient's block; the block's SMTP reply code and
 *   enhanced status code are its diagnosis; phrases decide only where the MTA gave no code;
 * - which of our messages it is about: the original Message-ID and our VERP token.
 * Classification: Permanent = 5.x.x (or a 5yz reply), Transient = 4.x.x (4yz) or a delay;
 * sub type NoEmail for "mailbox does not exist", Suppressed for suppression-list refusals.
 *
 * Pure function over the bytes: no I/O, no clock. Work is bounded: input size, MIME parts,
 * header block size, scanned text and line length are capped; regular expressions have no
 * nested or overlapping unbounded quantifiers; addresses are found by scanning around '@'.
 */
import { TextDecoder } from 'node:util';
import { Splitter, type MimeNode, type SplitterChunk } from '@zone-eu/mailsplit';

export type DsnAction = 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';
export type BounceType = 'Permanent' | 'Transient';
export type BounceSubType = 'General' | 'NoEmail' | 'Suppressed';

export interface DsnRecipient {
  /** The recipient we addressed (Original-Recipient when it is an address, else Final-Recipient), lower case, no "rfc822;". */
  address: string;
  action: DsnAction;
  /** Enhanced status code (RFC 3463), e.g. 5.1.1; derived from the reply code and text when the report gave none. */
  status: string;
  diagnosticCode: string;
  /** null when the message was delivered, relayed or expanded. */
  bounceType: BounceType | null;
  bounceSubType: BounceSubType | null;
}

export interface DsnFeedback {
  kind: 'dsn';
  recipients: DsnRecipient[];
  /** Original-Envelope-Id: the ENVID we gave at MAIL FROM. */
  envelopeId: string | null;
  originalMessageId: string | null;
  reportingMta: string | null;
  verpToken: string | null;
}

/**
 * A feedback report (ARF or a vendor's): what it says, not what it means to us. Not every
 * type is a complaint (not-spam, opt-out, auth-failure): domain/attribution.ts decides.
 */
export interface ComplaintFeedback {
  kind: 'complaint';
  /** abuse, fraud, opt-out, not-spam, virus, auth-failure, other, ... (lower case). */
  feedbackType: string;
  /**
   * The original recipients the report names (Original-Rcpt-To, Removal-Recipient, JMRP's
   * X-HmXmrOriginalRecipient, the sender of an unsubscribe request), lower case; empty when it
   * names none. Never taken from the original's To or Cc: they list everyone the message was
   * addressed to, not who reported it (and feedback loops redact them).
   */
  recipients: string[];
  originalMessageId: string | null;
  envelopeId: string | null;
  originalMailFrom: string | null;
  verpToken: string | null;
}

export interface OtherFeedback {
  kind: 'other';
}

export type Feedback = DsnFeedback | ComplaintFeedback | OtherFeedback;

// A report is small: a notice, status fields and at most a copy of the original message, which
// MTAs truncate or cut to its headers (RFC 3462 recommends headers only). Input over 5 MB is a
// returned large message or not a report; reading it would spend memory and CPU on bytes anyone
// can send us, so it is `other`. The other limits keep each step linear and small.
export const MAX_REPORT_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 200;
const MAX_HEADER_BYTES = 256 * 1024;
const MAX_TEXT_CHARS = 200_000; // notice text read by the plain-text rules
const MAX_LINE_CHARS = 2_000; // longer lines are cut before any pattern sees them
const MAX_DIAGNOSTIC_CHARS = 1_000;
const MAX_RECIPIENTS = 500;

const OTHER: OtherFeedback = { kind: 'other' };

export async function parseFeedback(raw: Buffer): Promise<Feedback> {
  if (raw.length === 0 || raw.length > MAX_REPORT_BYTES) return OTHER;
  let parts: Part[];
  try {
    parts = await splitMime(raw);
  } catch {
    return OTHER; // over a MIME limit (parts, header size) or unreadable
  }
  if (parts.length === 0) return OTHER;
  const report = new Report(parts);
  return readArf(report) ?? readVendorComplaint(report) ?? readSesJson(report) ?? readDsn(report) ?? readPlainBounce(report) ?? OTHER;
}

// ---------------------------------------------------------------------------------------------
// MIME: the parts in order, bodies decoded from their transfer encoding. message/rfc822 stays a
// leaf: it is the original message, of which only the header block is read.

interface Part {
  contentType: string;
  charset: string;
  headers: Fields;
  body: Buffer;
}

async function splitMime(raw: Buffer): Promise<Part[]> {
  const splitter = new Splitter({ ignoreEmbedded: true, maxHeadSize: MAX_HEADER_BYTES, maxChildNodes: MAX_PARTS });
  const nodes = new Map<MimeNode, { body: Buffer[]; data: Buffer[]; children: number }>();
  let last: { body: Buffer[] } | undefined;
  splitter.end(raw);
  for await (const item of splitter) {
    const chunk: SplitterChunk = item;
    if (chunk.type === 'node') {
      const parent = chunk.parentNode ? nodes.get(chunk.parentNode) : undefined;
      if (parent) parent.children++;
      const entry = { body: [], data: [], children: 0 };
      nodes.set(chunk, entry);
      last = entry;
    } else if (chunk.type === 'body') last?.body.push(chunk.value);
    else nodes.get(chunk.node)?.data.push(chunk.value);
  }
  return [...nodes].map(([node, { body, data, children }]) => {
    const contentType = /^[\w.+-]+\/[\w.+-]+/.exec((node.contentType || 'text/plain').toLowerCase())?.[0] ?? 'text/plain';
    const part: Part = {
      contentType,
      charset: /^[\w.:-]*/.exec((node.charset || '').toLowerCase().replace(/^charset=["']?/, ''))?.[0] ?? '',
      headers: parseFields(latin1OrUtf8(node.getHeaders())),
      body: decodeTransfer(Buffer.concat(body), (node.encoding || '').toLowerCase()),
    };
    // A multipart whose boundary is missing or mangled (relays do that) is one text body.
    if (contentType.startsWith('multipart/') && children === 0) return { ...part, contentType: 'text/plain', body: Buffer.concat(data) };
    return part;
  });
}

function decodeTransfer(body: Buffer, encoding: string): Buffer {
  if (encoding === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body.toString('latin1'));
  return body;
}

function decodeQuotedPrintable(s: string): Buffer {
  const text = s.replace(/=\r?\n/g, '');
  const out = Buffer.alloc(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const hex = c === 0x3d ? text.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      out[n++] = parseInt(hex, 16);
      i += 2;
    } else out[n++] = c & 0xff;
  }
  return out.subarray(0, n);
}

// Labels seen in real reports that TextDecoder does not know.
const CHARSET_ALIASES: Record<string, string> = { 'uft-8': 'utf-8', utf8: 'utf-8', 'x-sjis': 'shift_jis', 'unicode-1-1-utf-7': 'utf-8' };

function decodeText(body: Buffer, charset: string): string {
  const name = CHARSET_ALIASES[charset] ?? (charset || 'utf-8');
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(name);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  const text = decoder.decode(body);
  // Undeclared 8-bit text that is not UTF-8 reads better as Latin-1 than as replacement marks.
  return decoder.encoding === 'utf-8' && text.includes('\uFFFD') ? body.toString('latin1') : text;
}

function latin1OrUtf8(b: Buffer): string {
  const s = b.toString('utf8');
  return s.includes('\uFFFD') ? b.toString('latin1') : s;
}

/** RFC 2047 encoded words (=?charset?B|Q?...?=), for Subject. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?\s]{1,40})\?([BbQq])\?([^?\s]{0,1000})\?=/g, (_m, cs: string, enc: string, data: string) => {
      const bytes = enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : decodeQuotedPrintable(data.replace(/_/g, ' '));
      return decodeText(bytes, cs.toLowerCase().replace(/\*.*$/, ''));
    });
}

// ---------------------------------------------------------------------------------------------
// Header-style field blocks (message headers, DSN and ARF bodies): names lower case, values
// unfolded and trimmed.

interface Field {
  name: string;
  value: string;
}

class Fields {
  constructor(readonly list: Field[]) {}
  get(name: string): string | null {
    return this.list.find((f) => f.name === name)?.value ?? null;
  }
  all(name: string): string[] {
    return this.list.filter((f) => f.name === name).map((f) => f.value);
  }
  has(name: string): boolean {
    return this.list.some((f) => f.name === name);
  }
}

const FIELD_LINE = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,76})[ \t]*:[ \t]*(.*)$/;

/** Fields up to the first empty line, or through empty lines (`acrossBlanks`, for DSN and ARF bodies). */
function parseFields(text: string, acrossBlanks = false): Fields {
  const list: Field[] = [];
  for (const rawLine of text.slice(0, MAX_HEADER_BYTES).split(/\r?\n/)) {
    const line = rawLine.slice(0, MAX_LINE_CHARS);
    if (line.trim() === '') {
      if (!acrossBlanks && list.length > 0) break;
      continue;
    }
    const last = list.at(-1);
    if (last && /^[ \t]/.test(line)) {
      if (last.value.length < MAX_DIAGNOSTIC_CHARS * 4) last.value = `${last.value} ${line.trim()}`.trim();
      continue;
    }
    const m = FIELD_LINE.exec(line);
    if (m) list.push({ name: (m[1] ?? '').toLowerCase(), value: (m[2] ?? '').trim() });
    else if (!acrossBlanks && list.length > 0) break;
  }
  return new Fields(list);
}

// ---------------------------------------------------------------------------------------------
// The report as a whole: its headers, its parts by type, the notice text, the original message.

const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/rfc822-headers', 'message/global', 'message/global-headers', 'text/rfc822'];

class Report {
  readonly top: Fields;
  readonly subject: string;
  readonly fromAddress: string | null;
  private original: Fields | null | undefined;
  private readonly texts = new Map<boolean, string>();

  constructor(readonly parts: Part[]) {
    this.top = parts[0]?.headers ?? new Fields([]);
    this.subject = decodeWords(this.top.get('subject') ?? '').trim();
    this.fromAddress = firstAddress(this.top.get('from') ?? '');
  }

  partsOf(...types: string[]): Part[] {
    return this.parts.filter((p) => types.includes(p.contentType));
  }

  /** Header block of the returned original message: attached, or pasted below a plain-text notice. */
  originalHeaders(): Fields | null {
    if (this.original === undefined) {
      this.original = null;
      for (const p of this.partsOf(...ORIGINAL_TYPES)) {
        const f = parseFields(latin1OrUtf8(p.body.subarray(0, MAX_HEADER_BYTES)));
        if (f.list.length > 0) {
          this.original = f;
          break;
        }
      }
      this.original ??= pastedOriginalHeaders(this.notice(true));
    }
    return this.original;
  }

  /**
   * The human-readable notice: the text parts (HTML made plain) in order, without the returned
   * message. `withOriginal` keeps what follows the notice's "copy of your message" marker.
   */
  notice(withOriginal = false): string {
    const cached = this.texts.get(withOriginal);
    if (cached !== undefined) return cached;
    const chunks: string[] = [];
    let size = 0;
    for (const p of this.parts) {
      if (size > MAX_TEXT_CHARS) break;
      const single = p === this.parts[0];
      if (p.contentType.startsWith('multipart/')) continue;
      if (!(p.contentType === 'text/plain' || p.contentType === 'text/html' || single)) continue;
      const decoded = decodeText(p.body.subarray(0, MAX_TEXT_CHARS * 2), p.charset);
      const text = (p.contentType === 'text/html' ? htmlToText(decoded) : decoded).replace(/\r\n?/g, '\n');
      chunks.push(text);
      size += text.length;
    }
    const all = chunks.join('\n').slice(0, MAX_TEXT_CHARS);
    const result = withOriginal ? all : cutAtOriginal(all);
    this.texts.set(withOriginal, result);
    return result;
  }

  originalMessageId(): string | null {
    const id = this.originalHeaders()?.get('message-id');
    return id ? stripAngles(id) : null;
  }

  /** Our VERP token: the local part after "bounces+" in the report's recipients or the original's Return-Path. */
  verpToken(extra: string[] = []): string | null {
    const sources = [...this.top.all('to'), ...this.top.all('delivered-to'), ...this.top.all('x-original-to'), ...(this.originalHeaders()?.all('return-path') ?? []), ...extra];
    for (const s of sources) {
      for (const a of findAddresses(s, false)) {
        const m = /^bounces\+([^@]+)@/i.exec(a);
        if (m?.[1]) return m[1];
      }
    }
    return null;
  }
}

// Where the returned message starts in a plain-text notice: a separator line with a keyword
// ("------ This is a copy of the message ------"), a usual sentence ("Below this line is a copy
// of the message."), or a header block (Received:, Return-Path:, ... then another field).
const SEPARATOR_RUN = /^[\s>]*[-=_*|]{3,}/;
const SEPARATOR_KEYWORD = /original|returned message|copy of|message text|message header|headers? of|rfc822|unsent|undelivered message|mail info/i;
const ORIGINAL_SENTENCE =
  /^\s*(?:below (?:this line )?is a copy of|(?:the )?original message (?:follows|headers? follows?|is (?:included|attached|below|as follows))|original mail as follows|included is (?:a copy of )?the (?:original )?message|message headers? follows?|headers of the original message|(?:the )?header of the original message is following|a copy of the original message (?:is )?(?:below|follows|attached)|the message you sent was:|original message:?\s*$)/i;
const HEADER_START = /^(?:Return-Path|Received|Message-ID|DKIM-Signature|X-[A-Za-z-]+|Delivered-To):/i;

function cutAtOriginal(text: string): string {
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const line = (lines[i] ?? '').slice(0, MAX_LINE_CHARS);
    const run = SEPARATOR_RUN.exec(line);
    if (run && SEPARATOR_KEYWORD.test(line.slice(run[0].length, run[0].length + 100))) return lines.slice(0, i).join('\n');
    if (ORIGINAL_SENTENCE.test(line)) return lines.slice(0, i).join('\n');
    const next = lines[i + 1] ?? '';
    if (HEADER_START.test(line) && (FIELD_LINE.test(next) || /^[ \t]+\S/.test(next))) return lines.slice(0, i).join('\n');
  }
  return text;
}

function pastedOriginalHeaders(text: string): Fields | null {
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    if (/^\s{0,4}(?:Return-Path|Received|Message-ID|From|To|Subject|Date|DKIM-Signature):/i.test(lines[i] ?? '') && FIELD_LINE.test((lines[i + 1] ?? '').trimStart())) {
      const f = parseFields(lines.slice(i, i + 400).map((l) => l.replace(/^\s{1,4}(?=[A-Za-z-]+:)/, '')).join('\n'));
      if (f.has('message-id') || f.has('from') || f.has('subject')) return f;
    }
  }
  return null;
}

function htmlToText(html: string): string {
  return html
    .replace(/<(?:script|style)\b[^<>]{0,2000}>[^<]*<\/(?:script|style)>/gi, '')
    .replace(/<br\s{0,10}\/?>|<\/(?:p|div|tr|li|h\d|table)>/gi, '\n')
    .replace(/<[^<>]{0,2000}>/g, '')
    .replace(/&nbsp;/gi, ' ')
    .replace(/&lt;/gi, '<')
    .replace(/&gt;/gi, '>')
    .replace(/&quot;/gi, '"')
    .replace(/&#(\d{1,6});/g, (_m, n: string) => String.fromCodePoint(Math.min(Number(n), 0x10ffff)))
    .replace(/&amp;/gi, '&');
}

// ---------------------------------------------------------------------------------------------
// Addresses

const LOCAL_CHAR = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/;
const DOMAIN_CHAR = /[A-Za-z0-9.-]/;
const DOMAIN = /^[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,20}$/;

/** Addresses in a string, in order, found by scanning out from each '@' (linear); lower case unless `lower` is false. */
function findAddresses(s: string, lower = true): string[] {
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

function firstAddress(s: string): string | null {
  return findAddresses(s)[0] ?? null;
}

function stripAngles(v: string): string | null {
  const m = /<([^<>\s]{1,998})>/.exec(v);
  const id = (m ? m[1] : v.trim().split(/\s/)[0]) ?? '';
  return id || null;
}

/** Senders of bounces. */
const DAEMON_SENDER = /^(?:mailer[-_]?daemon|mail-?daemon|post_?master|mdaemon|mail\.?delivery|double-bounce|mailman-bounces)$/i;

function isDaemonSender(a: string): boolean {
  return DAEMON_SENDER.test(a.slice(0, a.indexOf('@')));
}

/** Never a failed recipient (postmaster can be: mail to postmaster@ bounces too). */
function isMailerDaemon(a: string): boolean {
  return /^(?:mailer[-_]?daemon|mail-?daemon|double-bounce)$/i.test(a.slice(0, a.indexOf('@')));
}

// ---------------------------------------------------------------------------------------------
// Codes and classification

/** Enhanced status code (RFC 3463): class 2/4/5, subject 0-7; not part of an IP address or version number. */
const ENHANCED = /(?<![\w./-])([245])\.([0-7])\.(\d{1,3})(?![\w/-]|\.\d)/;
const ENHANCED_G = new RegExp(ENHANCED.source, 'g');
/** SMTP reply code where replies start: line start, after "said:", "<<<", a colon, a bracket, ... */
const REPLY = /(?:^|[\s:(<>"'[=]|said)([245][0-5]\d)(?=[\s-]|$|[.,;:)\]])/;
const REPLY_G = new RegExp(REPLY.source, 'gm');

/** The first failure code, preferring a specific one to x.0.0. */
function enhancedIn(text: string): string | null {
  let best: string | null = null;
  for (const m of text.matchAll(ENHANCED_G)) {
    if (m[1] === '2') continue;
    const code = `${m[1]}.${m[2]}.${m[3]}`;
    if (!best || (best.endsWith('.0.0') && !code.endsWith('.0.0') && code[0] === best[0])) best = code;
    if (!best.endsWith('.0.0')) break;
  }
  return best;
}

function replyIn(text: string): string | null {
  for (const m of text.matchAll(REPLY_G)) if (!m[1]?.startsWith('2')) return m[1] ?? null;
  return null;
}

/** "Mailbox does not exist" in its many spellings. */
const NO_MAILBOX =
  /user (?:unknown|not found|doesn'?t exist|does not exist)|unknown (?:user|recipient|mailbox|address|local[- ]?part)|no such (?:user|mailbox|recipient|address|account|person)|(?:mailbox|recipient|user|address|account|e-?mail address)(?: \S{1,80})? (?:does not exist|doesn'?t exist|not exist|is unknown|not found|is not found)|invalid (?:recipient|mailbox|address|user)|recipient (?:is )?invalid|not a valid (?:mailbox|user|recipient)|no mailbox|unrouteable address|user (?:account )?(?:is )?(?:not|no longer) (?:valid|available|active)|bad destination mailbox|mailbox not found|account (?:has been )?(?:disabled|deleted|removed|closed)|no account by that name|doesn'?t have an? (?:\S{1,60} )?account|not listed in (?:the )?(?:\S{1,30} )?directory|recipient (?:name )?is not recognized/i;

/** Refusals because the address is on a suppression list (the recipient's or an ESP's). */
const SUPPRESSED = /suppression list|\bsuppressed\b|do[- ]not[- ](?:send|mail|contact) list|previously (?:bounced|unsubscribed|complained)/i;

/** Temporary wording, used only where no code says otherwise. */
const TRANSIENT_PHRASE = /temporar(?:y|ily)|try again later|will (?:be )?retr(?:y|ied)|still trying|delayed|deferred|greylist|not yet been delivered|will continue trying/i;

function inferStatus(digit: string, text: string): string {
  if (NO_MAILBOX.test(text)) return `${digit}.1.1`;
  if (/mailbox (?:is )?full|over quota|quota exceeded|insufficient (?:system )?storage|exceeded the (?:local )?limit/i.test(text)) return `${digit}.2.2`;
  if (/message (?:is )?too (?:big|large)|size (?:limit|exceeded)/i.test(text)) return `${digit}.3.4`;
  if (/host (?:not found|unknown)|unknown host|domain (?:not found|does not exist)|unrouteable|no mx|name service error/i.test(text)) return `${digit}.1.2`;
  if (/retry time(?:out)? (?:not reached|exceeded)|expired|too long|timed? ?out/i.test(text)) return `${digit}.4.7`;
  return `${digit}.0.0`;
}

function subTypeOf(bounceType: BounceType | null, status: string, diagnostic: string): BounceSubType | null {
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
function recipientOf(address: string, action: DsnAction, statusIn: string | null, reply: string | null, diagnostic: string, fallback: BounceType, wording = diagnostic): DsnRecipient {
  const diag = diagnostic.replace(/\s+/g, ' ').trim().slice(0, MAX_DIAGNOSTIC_CHARS);
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') {
    return { address, action, status: statusIn ?? '2.0.0', diagnosticCode: diag, bounceType: null, bounceSubType: null };
  }
  const cls = statusIn?.[0] ?? reply?.[0];
  const bounceType: BounceType = action === 'delayed' ? 'Transient' : cls === '5' ? 'Permanent' : cls === '4' ? 'Transient' : fallback;
  const status = statusIn ?? inferStatus(bounceType === 'Permanent' ? '5' : '4', wording);
  return { address, action, status, diagnosticCode: diag, bounceType, bounceSubType: subTypeOf(bounceType, status, wording) };
}

function dedupeRecipients(list: DsnRecipient[]): DsnRecipient[] {
  const seen = new Map<string, DsnRecipient>();
  for (const r of list) {
    const prev = seen.get(r.address);
    if (!prev || (prev.bounceType !== 'Permanent' && r.bounceType === 'Permanent')) seen.set(r.address, r); // the most severe entry wins
  }
  return [...seen.values()].slice(0, MAX_RECIPIENTS);
}

function unique(list: string[]): string[] {
  return [...new Set(list)].slice(0, MAX_RECIPIENTS);
}

// ---------------------------------------------------------------------------------------------
// RFC 5965 ARF

function readArf(report: Report): ComplaintFeedback | null {
  const part = report.partsOf('message/feedback-report')[0];
  if (!part) return null;
  const f = parseFields(decodeText(part.body, part.charset), true);
  const original = report.originalHeaders();
  let recipients = f.all('original-rcpt-to').flatMap((v) => findAddresses(v));
  if (recipients.length === 0) recipients = f.all('removal-recipient').flatMap((v) => findAddresses(v));
  const mailFrom = f.get('original-mail-from');
  return {
    kind: 'complaint',
    feedbackType: (f.get('feedback-type') ?? '').toLowerCase().split(/[\s;]/)[0] || 'other',
    recipients: unique(recipients),
    originalMessageId: report.originalMessageId(),
    envelopeId: f.get('original-envelope-id'),
    originalMailFrom: firstAddress(mailFrom ?? original?.get('return-path') ?? ''),
    verpToken: report.verpToken(mailFrom ? [mailFrom] : []),
  };
}

// ---------------------------------------------------------------------------------------------
// Complaints in vendor formats that are not ARF:
// - Microsoft JMRP (Outlook.com junk reports): the reported message attached, its
//   X-HmXmrOriginalRecipient naming who complained;
// - Apple Mail's unsubscribe request (X-Apple-Unsubscribe: true): an opt-out by its sender
//   (feedbackType opt-out: an unsubscribe, not a spam complaint).

function readVendorComplaint(report: Report): ComplaintFeedback | null {
  for (const p of report.partsOf('message/rfc822')) {
    const h = parseFields(latin1OrUtf8(p.body.subarray(0, MAX_HEADER_BYTES)));
    const who = h.all('x-hmxmroriginalrecipient').flatMap((v) => findAddresses(v));
    if (who.length === 0) continue;
    const id = h.get('message-id');
    return {
      kind: 'complaint',
      feedbackType: 'abuse',
      recipients: unique(who),
      originalMessageId: id ? stripAngles(id) : null,
      envelopeId: null,
      originalMailFrom: firstAddress(h.get('return-path') ?? ''),
      verpToken: report.verpToken(h.all('return-path')),
    };
  }
  if (/^\s*true\b/i.test(report.top.get('x-apple-unsubscribe') ?? '') && report.fromAddress) {
    return { kind: 'complaint', feedbackType: 'opt-out', recipients: [report.fromAddress], originalMessageId: null, envelopeId: null, originalMailFrom: null, verpToken: report.verpToken() };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Amazon SES notifications mailed by SNS: a JSON object in the body, bare or as the "Message"
// string of an SNS envelope.

function readSesJson(report: Report): Feedback | null {
  const text = report.notice(true);
  const start = text.search(/\{\s*"(?:notificationType|eventType|Type)"\s*:/);
  if (start === -1) return null;
  // Sendmail breaks lines over 990 characters with "!\n "; undo that before parsing.
  const json = balancedJson(text.slice(start).replace(/!\n /g, ''));
  let v = json ? parseJson(json) : null;
  if (isObject(v) && typeof v.Message === 'string' && v.notificationType === undefined) v = parseJson(v.Message);
  if (!isObject(v)) return null;
  const type = String(v.notificationType ?? v.eventType ?? '');
  const mail = isObject(v.mail) ? v.mail : {};
  const source = typeof mail.source === 'string' ? mail.source : null;
  const messageId = sesHeader(mail, 'message-id') ?? (typeof mail.messageId === 'string' ? mail.messageId : null);
  const verpToken = report.verpToken(source ? [source] : []);
  if (type === 'Complaint' && isObject(v.complaint)) {
    const c = v.complaint;
    const recipients = list(c.complainedRecipients).flatMap((r) => (isObject(r) ? findAddresses(String(r.emailAddress ?? '')) : []));
    return { kind: 'complaint', feedbackType: String(c.complaintFeedbackType ?? 'abuse').toLowerCase(), recipients: unique(recipients), originalMessageId: messageId, envelopeId: null, originalMailFrom: source ? firstAddress(source) : null, verpToken };
  }
  const recipients: DsnRecipient[] = [];
  let reportingMta: unknown = null;
  if (type === 'Bounce' && isObject(v.bounce)) {
    const b = v.bounce;
    reportingMta = b.reportingMTA;
    for (const r of list(b.bouncedRecipients)) {
      const address = isObject(r) ? firstAddress(String(r.emailAddress ?? '')) : null;
      if (!address || !isObject(r)) continue;
      const diag = String(r.diagnosticCode ?? '');
      const rec = recipientOf(address, 'failed', enhancedIn(String(r.status ?? '')) ?? enhancedIn(diag), replyIn(diag), diag, b.bounceType === 'Transient' ? 'Transient' : 'Permanent');
      // SES's own verdict wins where it gave one (it knows its suppression list).
      if (b.bounceType === 'Permanent' || b.bounceType === 'Transient') rec.bounceType = b.bounceType;
      if (b.bounceSubType === 'Suppressed' || b.bounceSubType === 'OnAccountSuppressionList') rec.bounceSubType = 'Suppressed';
      else if (b.bounceSubType === 'NoEmail') rec.bounceSubType = 'NoEmail';
      else rec.bounceSubType = subTypeOf(rec.bounceType, rec.status, diag);
      recipients.push(rec);
    }
  } else if (type === 'Delivery' && isObject(v.delivery)) {
    const d = v.delivery;
    reportingMta = d.reportingMTA;
    const response = String(d.smtpResponse ?? '');
    for (const r of list(d.recipients)) {
      const address = firstAddress(String(r));
      if (address) recipients.push(recipientOf(address, 'delivered', /\b2\.\d\.\d{1,3}\b/.exec(response)?.[0] ?? null, null, response, 'Permanent'));
    }
  } else if (type === 'DeliveryDelay' && isObject(v.deliveryDelay)) {
    for (const r of list(v.deliveryDelay.delayedRecipients)) {
      const address = isObject(r) ? firstAddress(String(r.emailAddress ?? '')) : null;
      if (!address || !isObject(r)) continue;
      const diag = String(r.diagnosticCode ?? '');
      recipients.push(recipientOf(address, 'delayed', enhancedIn(String(r.status ?? '')), replyIn(diag), diag, 'Transient'));
    }
  } else return null;
  return {
    kind: 'dsn',
    recipients: dedupeRecipients(recipients),
    envelopeId: null,
    originalMessageId: messageId,
    reportingMta: typeof reportingMta === 'string' ? stripType(reportingMta) : null,
    verpToken,
  };
}

function sesHeader(mail: Record<string, unknown>, name: string): string | null {
  for (const h of list(mail.headers)) {
    if (isObject(h) && String(h.name ?? '').toLowerCase() === name && typeof h.value === 'string') return stripAngles(h.value);
  }
  return null;
}

/** The JSON object at the start of `text`, by counting braces outside strings (linear). */
function balancedJson(text: string): string | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length && i < MAX_TEXT_CHARS; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(0, i + 1).replace(/\n/g, '');
  }
  return null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v.slice(0, MAX_RECIPIENTS) : [];
}

// ---------------------------------------------------------------------------------------------
// RFC 3464 DSN

const ACTIONS: readonly DsnAction[] = ['failed', 'delayed', 'delivered', 'relayed', 'expanded'];
const RECIPIENT_FIELDS = new Set(['original-recipient', 'final-recipient', 'x-actual-recipient', 'action', 'status', 'remote-mta', 'diagnostic-code', 'last-attempt-date', 'final-log-id', 'will-retry-until']);

/**
 * Per-message fields and per-recipient groups of a delivery-status body. A recipient field seen
 * again opens the next group, so missing blank lines and any field order are read right.
 */
function dsnGroups(text: string): { perMessage: Field[]; perRecipient: Fields[] } {
  const perMessage: Field[] = [];
  const groups: { fields: Field[]; names: Set<string> }[] = [];
  let current: { fields: Field[]; names: Set<string> } | undefined;
  for (const f of parseFields(text, true).list) {
    if (RECIPIENT_FIELDS.has(f.name) && (!current || current.names.has(f.name))) {
      if (groups.length >= MAX_RECIPIENTS) break;
      current = { fields: [], names: new Set() };
      groups.push(current);
    }
    if (!current) perMessage.push(f);
    else {
      current.fields.push(f);
      current.names.add(f.name);
    }
  }
  return { perMessage, perRecipient: groups.map((g) => new Fields(g.fields)) };
}

function stripType(v: string): string {
  return v.replace(/^[A-Za-z0-9-]{1,20}\s*;\s*/, '').trim();
}

function readDsn(report: Report): DsnFeedback | null {
  const sources = report.partsOf('message/delivery-status', 'message/global-delivery-status').map((p) => decodeText(p.body, p.charset));
  if (sources.length === 0) {
    // DSN fields in a text part: some MTAs send them without the MIME type, or relays lose it.
    const text = report.notice(true);
    const at = text.search(/^(?:Reporting-MTA|Final-Recipient|Original-Recipient)\s*:/im);
    if (at !== -1 && /^Final-Recipient\s*:/im.test(text.slice(at)) && /^Action\s*:/im.test(text.slice(at))) sources.push(text.slice(at));
  }
  const perMessage: Field[] = [];
  const perRecipient: Fields[] = [];
  for (const s of sources) {
    const g = dsnGroups(s);
    perMessage.push(...g.perMessage);
    perRecipient.push(...g.perRecipient);
  }
  const notice = report.notice();
  const lowerNotice = notice.toLowerCase();
  const recipients: DsnRecipient[] = [];
  for (const g of perRecipient.slice(0, MAX_RECIPIENTS)) {
    const original = firstAddress(stripType(g.get('original-recipient') ?? ''));
    const address = original ?? firstAddress(stripType(g.get('final-recipient') ?? '')) ?? firstAddress(stripType(g.get('x-actual-recipient') ?? ''));
    if (!address) continue;
    const statusField = g.get('status') ?? '';
    const diagnostic = stripType(g.get('diagnostic-code') ?? '') || nearAddress(notice, lowerNotice, address);
    let status = enhancedIn(statusField) ?? /^2\.\d\.\d{1,3}/.exec(statusField.trim())?.[0] ?? null;
    // "5.0.0" next to a diagnostic that says "550 5.1.1": the diagnostic is more specific. A
    // status of the other class is not replaced: the reporting MTA decided (e.g. 4.x.x when it
    // treats a 5yz greeting as temporary).
    const fromDiagnostic = enhancedIn(diagnostic);
    if (fromDiagnostic && (!status || (status.endsWith('.0.0') && fromDiagnostic[0] === status[0]))) status = fromDiagnostic;
    const actionField = (g.get('action') ?? '').toLowerCase().split(/[\s(;]/)[0] ?? '';
    const action = ACTIONS.find((a) => a === actionField) ?? (status?.startsWith('2') ? 'delivered' : 'failed');
    recipients.push(recipientOf(address, action, status, replyIn(diagnostic), diagnostic, 'Permanent'));
  }
  if (recipients.length === 0) return null; // no usable recipient in the status part: read the notice instead
  const pm = new Fields(perMessage);
  const mta = pm.get('reporting-mta');
  return {
    kind: 'dsn',
    recipients: dedupeRecipients(recipients),
    envelopeId: pm.get('original-envelope-id'),
    originalMessageId: report.originalMessageId(),
    reportingMta: mta ? stripType(mta) : null,
    verpToken: report.verpToken(),
  };
}

/** The paragraph after `address` in the notice, when it carries a code (for status parts without Diagnostic-Code). */
function nearAddress(notice: string, lowerNotice: string, address: string): string {
  const i = lowerNotice.indexOf(address);
  if (i === -1) return '';
  const text = notice.slice(i + address.length, i + address.length + 600).split(/\n\s*\n/)[0] ?? '';
  return ENHANCED.test(text) || REPLY.test(text) ? text.replace(/^[>:\s]+/, '') : '';
}

// ---------------------------------------------------------------------------------------------
// Plain-text bounces

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

function readPlainBounce(report: Report): DsnFeedback | null {
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
