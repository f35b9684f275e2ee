/**
 * Watches the DATA stream as it arrives: counts bytes against the size limit and finds
 * bare CR or bare LF (a CR not followed by LF, an LF not preceded by CR), across chunk
 * boundaries. smtp-server ends DATA only on CRLF.CRLF, so a malformed end-of-data
 * sequence stays inside the message; refusing any message with a bare line ending means
 * no such sequence can be stored, relayed, or ever read as a second message.
 */
export class DataScanner {
  private bytes = 0;
  private lastWasCr = false;
  private bare = false;
  private readonly chunks: Buffer[] = [];

  constructor(private readonly maxBytes: number) {}

  /** Takes a chunk; returns false once the size limit is exceeded (and keeps nothing more). */
  push(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      this.chunks.length = 0;
      return false;
    }
    if (!this.bare) this.bare = this.hasBareLineEnding(chunk);
    this.chunks.push(chunk);
    return true;
  }

  private hasBareLineEnding(chunk: Buffer): boolean {
    let prevCr = this.lastWasCr;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (prevCr && c !== 0x0a) return true;
      if (c === 0x0a && !prevCr) return true;
      prevCr = c === 0x0d;
    }
    this.lastWasCr = prevCr;
    return false;
  }

  get size(): number {
    return this.bytes;
  }

  get exceeded(): boolean {
    return this.bytes > this.maxBytes;
  }

  /** Whether the message had a bare CR or LF (a CR at the very end counts: DATA ends with CRLF). */
  get bareLineEnding(): boolean {
    return this.bare || this.lastWasCr;
  }

  message(): Buffer {
    return Buffer.concat(this.chunks, this.bytes);
  }
}
