/**
 * Spam verdicts: what a scanner's score and action mean for a message (stored as spam,
 * refused at DATA, or ham). A scanner that cannot answer gives an explicit `unscanned`,
 * never a silent pass. The scanner itself is src/clients/rspamd.ts.
 */
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

export interface SpamScanner {
  scan(input: ScanInput): Promise<SpamCheck>;
}

/** The verdict of a scanner's score and action (rspamd's: `reject` refuses whatever the score). */
export function spamVerdict(score: number, action: string, policy: SpamPolicy): SpamCheck {
  const reject = action === 'reject' || score >= policy.rejectScore;
  return { score, verdict: reject || score >= policy.spamScore ? 'spam' : 'ham', reject };
}

/** A scan that did not happen, and why. */
export function unscanned(error: string): SpamCheck {
  return { score: null, verdict: 'unscanned', reject: false, error };
}

