/** The report as a whole: its headers, its parts by type, the notice text, the original message. */
import libmime from 'libmime';
import { findAddresses, firstAddress, stripAngles } from './addresses';
import { MAX_LINE_CHARS, MAX_TEXT_CHARS } from './limits';
import { decodeText, FIELD_LINE, Fields, parseFields, parseHeaderBlock, type Part } from './mime';

const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/rfc822-headers', 'message/global', 'message/global-headers', 'text/rfc822'];

export class Report {
  readonly top: Fields;
  readonly subject: string;
  readonly fromAddress: string | null;
  private original: Fields | null | undefined;
  private readonly texts = new Map<boolean, string>();

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
