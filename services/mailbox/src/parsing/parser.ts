/**
 * The pool of parse workers. A message gets PARSE_TIMEOUT_MS for a full parse; if that
 * fails or times out (the worker is then terminated and replaced), its header block gets a
 * second, short chance; if even that fails, the message is still stored with its raw bytes
 * and empty fields. Nothing accepted is dropped because it could not be parsed.
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import type { ParsedMail } from './parsed-mail';
import type { ParseTask } from './parse.worker';

export interface ParserOptions {
  workers: number;
  timeoutMs: number;
  maxHtmlBytes: number;
  /** Heap of each worker; a message that needs more fails its parse, not the service. */
  workerHeapMb: number;
}

// Workers load compiled JavaScript: from dist/ when running the build, and from the build
// next to the sources when the service runs from them (tests; `npm test` builds first).
function workerFile(): string {
  const here = __dirname;
  const inSources = here.split(path.sep).includes('src');
  return path.join(inSources ? here.replace(`${path.sep}src${path.sep}`, `${path.sep}dist${path.sep}`) : here, 'parse.worker.js');
}

export function emptyParse(error: string): ParsedMail {
  return { subject: '', message_id: null, in_reply_to: null, references: [], from: null, reply_to: [], to: [], cc: [], text: '', html: '', extracted_text: null, extracted_html: null, attachments: [], error };
}

export class MailParser {
  private readonly pool: Piscina<ParseTask, ParsedMail>;
  // At most one parse per worker is handed to the pool, so a message's deadline starts when a
  // worker takes it, not while it waits behind others.
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly opts: ParserOptions) {
    this.pool = new Piscina({
      filename: workerFile(),
      minThreads: 1,
      maxThreads: opts.workers,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: opts.workerHeapMb },
    });
  }

  async parse(raw: Uint8Array): Promise<ParsedMail> {
    try {
      return await this.run({ raw, maxHtmlBytes: this.opts.maxHtmlBytes }, this.opts.timeoutMs);
    } catch (err) {
      const reason = err instanceof Error && err.name === 'AbortError' ? `parsing took longer than ${this.opts.timeoutMs} ms` : `parsing failed: ${String(err instanceof Error ? err.message : err).slice(0, 200)}`;
      try {
        const headers = await this.run({ raw, headersOnly: true, maxHtmlBytes: this.opts.maxHtmlBytes }, Math.min(this.opts.timeoutMs, 2_000));
        return { ...headers, error: `${reason}; only the headers were read` };
      } catch {
        return emptyParse(`${reason}; the headers could not be read either`);
      }
    }
  }

  private async run(task: ParseTask, timeoutMs: number): Promise<ParsedMail> {
    if (this.running < this.opts.workers) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over
    try {
      return await this.pool.run(task, { signal: AbortSignal.timeout(timeoutMs) });
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
