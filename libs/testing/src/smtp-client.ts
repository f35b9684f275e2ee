/**
 * A raw SMTP client over a socket, for what a well-behaved client library will not send:
 * malformed end-of-data sequences, oversized streams, pipelined transactions. It reads
 * replies (multi-line aware) and writes bytes exactly as given.
 */
import net from 'node:net';

export interface SmtpReplyLine {
  code: number;
  /** The last line's text. */
  text: string;
  /** Every line's text, for multi-line replies (EHLO). */
  lines?: string[];
}

export class RawSmtp {
  private buffer = '';
  private continuation: string[] = [];
  private readonly waiting: ((reply: SmtpReplyLine) => void)[] = [];
  private readonly replies: SmtpReplyLine[] = [];
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\r\n')) !== -1) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        if (/^\d{3}-/.test(line)) {
          this.continuation.push(line.slice(4));
        } else if (/^\d{3}( |$)/.test(line)) {
          const lines = [...this.continuation, line.slice(4)];
          this.continuation = [];
          this.deliver(lines.length > 1 ? { code: Number(line.slice(0, 3)), text: line.slice(4), lines } : { code: Number(line.slice(0, 3)), text: line.slice(4) });
        }
      }
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiting.splice(0)) w({ code: 0, text: 'connection closed' });
    });
    socket.on('error', () => undefined);
  }

  private deliver(reply: SmtpReplyLine): void {
    const w = this.waiting.shift();
    if (w) w(reply);
    else this.replies.push(reply);
  }

  static async connect(port: number, host = '127.0.0.1'): Promise<RawSmtp> {
    const socket = net.connect(port, host);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawSmtp(socket);
  }

  /** The next reply (code 0 when the server closed the connection). */
  reply(): Promise<SmtpReplyLine> {
    const r = this.replies.shift();
    if (r) return Promise.resolve(r);
    if (this.closed) return Promise.resolve({ code: 0, text: 'connection closed' });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.socket.write(data, () => resolve());
    });
  }

  async command(line: string): Promise<SmtpReplyLine> {
    await this.write(`${line}\r\n`);
    return this.reply();
  }

  close(): void {
    this.socket.destroy();
  }
}
