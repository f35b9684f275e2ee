/**
 * Spam verdicts from rspamd's HTTP API (POST /checkv2), with a hard deadline. When rspamd
 * cannot be reached or does not answer in time the verdict is an explicit `unscanned`,
 * never a silent pass: the message is stored and its verdict says so.
 */
import { z } from 'zod';
import type { SpamResult } from '@mailroom/contracts';

export interface SpamPolicy {
  /** At or above: stored with label spam, not announced. */
  spamScore: number;
  /** At or above (or rspamd's action `reject`): refused at DATA with 550. */
  rejectScore: number;
}

export interface SpamCheck extends SpamResult {
  /** Refuse at DATA. */
  reject: boolean;
  /** Why it is unscanned, for logs. */
  error?: string;
}

export interface ScanInput {
  raw: Buffer;
  ip: string;
  helo: string;
  mailFrom: string;
  recipients: string[];
  queueId: string;
}

const rspamdAnswer = z.object({ score: z.number(), action: z.string() });

export class SpamScanner {
  constructor(
    private readonly url: string | null,
    private readonly timeoutMs: number,
    private readonly policy: SpamPolicy,
  ) {}

  async scan(input: ScanInput): Promise<SpamCheck> {
    if (!this.url) return { score: null, verdict: 'unscanned', reject: false, error: 'spam scanning is off (RSPAMD_URL=off)' };
    const headers: Record<string, string> = {
      IP: input.ip,
      Helo: input.helo || 'unknown',
      'Queue-Id': input.queueId,
      'Content-Type': 'message/rfc822',
    };
    if (input.mailFrom) headers.From = input.mailFrom;
    try {
      const res = await fetch(new URL('/checkv2', this.url), {
        method: 'POST',
        // rspamd reads one address per Rcpt header and fetch would join repeats: the first stands for all.
        headers: { ...headers, ...(input.recipients[0] ? { Rcpt: input.recipients[0] } : {}) },
        body: input.raw,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) return { score: null, verdict: 'unscanned', reject: false, error: `rspamd answered HTTP ${res.status}` };
      const parsed = rspamdAnswer.safeParse(await res.json());
      if (!parsed.success) return { score: null, verdict: 'unscanned', reject: false, error: 'rspamd answer not understood' };
      const { score, action } = parsed.data;
      const reject = action === 'reject' || score >= this.policy.rejectScore;
      return { score, verdict: reject || score >= this.policy.spamScore ? 'spam' : 'ham', reject };
    } catch (err) {
      return { score: null, verdict: 'unscanned', reject: false, error: err instanceof Error ? err.message : String(err) };
    }
  }
}
