/** The report as a whole: its headers, its parts by type, the notice text, the original message. */
import { compile } from 'html-to-text';
import libmime from 'libmime';
import { findAddresses, firstAddress, stripAngles } from './addresses';
import { MAX_HTML_CHARS, MAX_LINE_CHARS, MAX_TEXT_CHARS } from './limits';
import { decodeText, FIELD_LINE, Fields, parseFields, parseHeaderBlock, type Part } from './mime';

const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/rfc822-headers', 'message/global', 'message/global-headers', 'text/rfc822'];

export class Report {
  readonly top: Fields;
  readonly subject: string;
  readonly fromAddress: string | null;
  private original: Fields | null | undefined;
  private text: string | undefined;
  private cut: string | undefined;

  constructor(readonly parts: Part[]) {
    this.top = parts[0]?.headers ?? new Fields([]);
    this.subject = libmime.decodeWords(this.top.get('subject') ?? '').trim();
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
        const f = parseHeaderBlock(p.body);
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
    this.text ??= this.readText();
    if (withOriginal) return this.text;
    this.cut ??= cutAtOriginal(this.text);
    return this.cut;
  }

  private readText(): string {
    const chunks: string[] = [];
    let size = 0;
    for (const p of this.parts) {
      if (size > MAX_TEXT_CHARS) break;
      const single = p === this.parts[0];
      if (p.contentType.startsWith('multipart/')) continue;
      if (!(p.contentType === 'text/plain' || p.contentType === 'text/html' || single)) continue;
      const decoded = decodeText(p.body.subarray(0, MAX_TEXT_CHARS * 2), p.charset);
      const text = (p.contentType === 'text/html' ? htmlToText(decoded.slice(0, MAX_HTML_CHARS)) : decoded).replace(/\r\n?/g, '\n');
      chunks.push(text);
      size += text.length;
    }
    return chunks.join('\n').slice(0, MAX_TEXT_CHARS);
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

// HTML as plain text: blocks end a line (the plain-text rules read lines), without the
// converter's decorations (list bullets, quote marks, upper-case headings, blank lines around
// paragraphs); links and images are their visible text.
const BLOCKS = ['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'ul', 'ol', 'li', 'table', 'tr', 'dl', 'dt', 'dd'];

const htmlToText = compile({
  wordwrap: false,
  // Untrusted input: deep nesting overflows the converter's stack. (The parser's work grows with
  // the square of the depth: the caller bounds the input, MAX_HTML_CHARS.)
  limits: { maxDepth: 100 },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'hr', format: 'skip' },
    ...BLOCKS.map((selector) => ({ selector, format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } })),
  ],
});
