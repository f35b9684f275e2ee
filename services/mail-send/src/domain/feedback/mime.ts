/**
 * MIME for reports: the parts in order, bodies decoded from their transfer encoding, text from
 * its charset, header-style field blocks. message/rfc822 stays a leaf: it is the original
 * message, of which only the header block is read.
 */
import { Splitter, type MimeNode, type SplitterChunk } from '@zone-eu/mailsplit';
import { decode as decodeCharset } from 'libmime/lib/charset';
import { decode as decodeQuotedPrintable } from 'libqp';
import { MAX_DIAGNOSTIC_CHARS, MAX_HEADER_BYTES, MAX_LINE_CHARS, MAX_PARTS } from './limits';

export interface Part {
  contentType: string;
  charset: string;
  headers: Fields;
  body: Buffer;
}

export async function splitMime(raw: Buffer): Promise<Part[]> {
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
      headers: parseFields(decodeText(node.getHeaders(), '')),
      body: decodeTransfer(Buffer.concat(body), (node.encoding || '').toLowerCase()),
    };
    // A multipart whose boundary is missing or mangled (relays do that) is one text body.
    if (contentType.startsWith('multipart/') && children === 0) return { ...part, contentType: 'text/plain', body: Buffer.concat(data) };
    return part;
  });
}

function decodeTransfer(body: Buffer, encoding: string): Buffer {
  if (encoding === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

/**
 * Text in its declared charset, by libmime (iconv-lite, and encoding-japanese for ISO-2022-JP);
 * libmime reads a charset it does not know, or refuses (UTF-7), as UTF-8.
 */
export function decodeText(body: Buffer, charset: string): string {
  const text = decodeCharset(body, charset || 'utf-8');
  // Undeclared 8-bit text that is not UTF-8 reads better as Latin-1 than as replacement marks.
  return text.includes('\uFFFD') && text === body.toString('utf8') ? body.toString('latin1') : text;
}

// ---------------------------------------------------------------------------------------------
// Header-style field blocks (message headers, DSN and ARF bodies): names lower case, values
// unfolded and trimmed.

export interface Field {
  name: string;
  value: string;
}

export class Fields {
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

export const FIELD_LINE = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,76})[ \t]*:[ \t]*(.*)$/;

/** Fields up to the first empty line, or through empty lines (`acrossBlanks`, for DSN and ARF bodies). */
export function parseFields(text: string, acrossBlanks = false): Fields {
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

/** The header block at the start of a message (a returned original), in UTF-8 or else Latin-1. */
export function parseHeaderBlock(message: Buffer): Fields {
  return parseFields(decodeText(message.subarray(0, MAX_HEADER_BYTES), ''));
}
