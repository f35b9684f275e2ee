/**
 * DKIM signatures (RFC 6376) of the messages nodemailer's composer builds: relaxed/relaxed,
 * rsa-sha256 (RFC 8301: 2048 bits or more, checked at start-up) or ed25519-sha256 (RFC 8463).
 *
 * Why not mailauth's dkimSign, which signed our mail before (mailauth stays our verifier in
 * the tests): it takes the key as PEM only and parses it for every message, which with
 * OpenSSL's per-key set-up costs more than half the RSA signature again, and it signs on the
 * event loop. Here the key is parsed once, and the signature is made on libuv's thread pool.
 */
import { createHash, createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';

export interface DkimKey {
  domain: string;
  selector: string;
  privateKey: KeyObject;
}

/** A key of DKIM_PRIVATE_KEY (PEM), parsed once; the configuration has checked its type and size. */
export function dkimKey(domain: string, selector: string, pem: string): DkimKey {
  return { domain, selector, privateKey: createPrivateKey(pem) };
}

/**
 * The header fields signed, each instance present. `from` is signed once more than it
 * occurs (RFC 6376 section 8.15), so a From added on the way breaks the signature.
 */
const SIGNED_FIELDS = ['from', 'sender', 'reply-to', 'subject', 'date', 'message-id', 'to', 'cc', 'in-reply-to', 'references', 'mime-version', 'content-type', 'content-transfer-encoding', 'list-unsubscribe', 'list-unsubscribe-post'];
const OVERSIGNED = new Set(['from']);

interface Field {
  name: string;
  /** The field as it stands, folding included, without the final line break. */
  text: string;
}

function splitMessage(raw: Buffer): { header: string; body: Buffer } {
  const crlf = raw.indexOf('\r\n\r\n');
  if (crlf >= 0) return { header: raw.subarray(0, crlf + 2).toString('latin1'), body: raw.subarray(crlf + 4) };
  const lf = raw.indexOf('\n\n');
  if (lf >= 0) return { header: raw.subarray(0, lf + 1).toString('latin1'), body: raw.subarray(lf + 2) };
  return { header: raw.toString('latin1'), body: Buffer.alloc(0) };
}

function parseFields(header: string): Field[] {
  const fields: Field[] = [];
  for (const line of header.split(/\r?\n/)) {
    if (line === '') continue;
    const last = fields[fields.length - 1];
    if ((line[0] === ' ' || line[0] === '\t') && last) last.text += `\r\n${line}`;
    else {
      const colon = line.indexOf(':');
      if (colon > 0) fields.push({ name: line.slice(0, colon).trim().toLowerCase(), text: line });
    }
  }
  return fields;
}

/** Relaxed header canonicalization (RFC 6376 section 3.4.2), without the line break. */
export function relaxedHeader(text: string): string {
  const colon = text.indexOf(':');
  const name = text.slice(0, colon).trim().toLowerCase();
  const value = text
    .slice(colon + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim();
  return `${name}:${value}`;
}

/** Relaxed body canonicalization (RFC 6376 section 3.4.4); an empty body stays empty. */
export function relaxedBody(body: string): string {
  const lines = body.split(/\r?\n/);
  let end = lines.length;
  const out: string[] = new Array<string>(end);
  for (let i = 0; i < end; i++) out[i] = lines[i]!.replace(/[ \t]+/g, ' ').replace(/ $/, '');
  while (end > 0 && out[end - 1] === '') end--;
  return end === 0 ? '' : `${out.slice(0, end).join('\r\n')}\r\n`;
}

function fold(value: string, width: number): string {
  const parts: string[] = [];
  for (let i = 0; i < value.length; i += width) parts.push(value.slice(i, i + width));
  return parts.join('\r\n ');
}

function signAsync(algorithm: string | null, data: Buffer, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => cryptoSign(algorithm, data, key, (err, signature) => (err ? reject(err) : resolve(signature))));
}

/** The message with a DKIM-Signature field prepended; `now` is the signature's t=. */
export async function signDkim(raw: Buffer, key: DkimKey, now: Date): Promise<Buffer> {
  const { header, body } = splitMessage(raw);
  const bodyHash = createHash('sha256').update(relaxedBody(body.toString('latin1')), 'latin1').digest('base64');
  return Buffer.concat([Buffer.from(await dkimSignature(header, bodyHash, key, now), 'latin1'), raw]);
}

/** The most header a streamed message may have before its body (nodemailer's are a few KB). */
const MAX_HEADER_BYTES = 256 * 1024;

/**
 * The header and relaxed body hash of a message read in chunks (a composed message of any
 * size): lines are canonicalized as they complete, empty lines held back until a line with
 * text follows (trailing ones do not count), so memory is one line, whatever the size.
 */
export class StreamingDkimHash {
  /** Bytes before the body is found: the header (at most MAX_HEADER_BYTES) and what followed it in the chunk. */
  private pending = Buffer.alloc(0);
  private header: string | null = null;
  private partial = '';
  private emptyLines = 0;
  private readonly sha = createHash('sha256');

  update(chunk: Buffer): void {
    if (this.header === null) {
      this.pending = Buffer.concat([this.pending, chunk]);
      // As splitMessage: the first CRLF CRLF, else the first LF LF.
      const crlf = this.pending.indexOf('\r\n\r\n');
      const lf = crlf >= 0 ? -1 : this.pending.indexOf('\n\n');
      if (crlf < 0 && lf < 0) {
        if (this.pending.length > MAX_HEADER_BYTES) throw new Error(`a message header longer than ${MAX_HEADER_BYTES} bytes cannot be signed`);
        return;
      }
      this.header = this.pending.subarray(0, crlf >= 0 ? crlf + 2 : lf + 1).toString('latin1');
      chunk = this.pending.subarray(crlf >= 0 ? crlf + 4 : lf + 2);
      this.pending = Buffer.alloc(0);
    }
    const lines = (this.partial + chunk.toString('latin1')).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.line(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  private line(raw: string): void {
    const line = raw.replace(/[ \t]+/g, ' ').replace(/ $/, '');
    if (line === '') {
      this.emptyLines++;
      return;
    }
    if (this.emptyLines) this.sha.update('\r\n'.repeat(this.emptyLines), 'latin1');
    this.emptyLines = 0;
    this.sha.update(`${line}\r\n`, 'latin1');
  }

  /** The header (latin1, up to its last line break) and the body hash (base64), once every chunk is in. */
  finish(): { header: string; bodyHash: string } {
    // No empty line: all header, an empty body.
    if (this.header === null) return { header: this.pending.toString('latin1'), bodyHash: createHash('sha256').digest('base64') };
    if (this.partial !== '') this.line(this.partial.endsWith('\r') ? this.partial.slice(0, -1) : this.partial);
    this.partial = '';
    return { header: this.header, bodyHash: this.sha.digest('base64') };
  }
}

/** The DKIM-Signature field (with its line break) of a message of this header and relaxed body hash. */
export async function dkimSignature(header: string, bodyHash: string, key: DkimKey, now: Date): Promise<string> {
  const fields = parseFields(header);

  // Several instances of a field are signed from the last one up (RFC 6376 section 5.4.2).
  const names: string[] = [];
  const canonical: string[] = [];
  for (const name of SIGNED_FIELDS) {
    const present = fields.filter((f) => f.name === name);
    for (let i = present.length - 1; i >= 0; i--) {
      names.push(name);
      canonical.push(`${relaxedHeader(present[i]!.text)}\r\n`);
    }
    if (present.length && OVERSIGNED.has(name)) names.push(name); // no instance left: signs "absent"
  }

  const type = key.privateKey.asymmetricKeyType;
  if (type !== 'rsa' && type !== 'ed25519') throw new Error(`DKIM keys are RSA or ed25519, not ${String(type)}`);
  const unsigned =
    `DKIM-Signature: v=1; a=${type}-sha256; c=relaxed/relaxed; d=${key.domain};\r\n` +
    ` s=${key.selector}; t=${Math.floor(now.getTime() / 1000)};\r\n` +
    ` h=${names.join(':')};\r\n` +
    ` bh=${bodyHash};\r\n` +
    ' b=';
  const data = Buffer.from(canonical.join('') + relaxedHeader(unsigned), 'latin1');
  // RFC 8463: ed25519 signs the SHA-256 digest of the data; RSA hashes as part of PKCS#1 v1.5.
  const signature = type === 'rsa' ? await signAsync('sha256', data, key.privateKey) : await signAsync(null, createHash('sha256').update(data).digest(), key.privateKey);
  return `${unsigned}${fold(signature.toString('base64'), 72)}\r\n`;
}
