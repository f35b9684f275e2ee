/**
 * What happens between the end of DATA and the reply: authentication and spam verdicts
 * (in parallel, each bounded), the spam policy, then durable hand-off: the raw bytes go to
 * the MAIL_RAW bucket and the `mail.inbound` work item must be acknowledged by JetStream
 * before the sender hears 250. If either fails the sender hears 451 and retries. A raw
 * object whose work item certainly was not stored (nothing took the publish) is removed;
 * after a publish with no answer it is kept, since the item may have been stored.
 */
import { newId, type AuthResults, type FeedbackMail, type InboundMail } from '@mailroom/contracts';
import type { Clock, Logger } from '@mailroom/platform';
import type { InboxRecipient, Recipient } from './recipients';
import { SmtpReply } from './replies';
import type { SpamCheck, SpamScanner } from './spam';

export interface Envelope {
  ip: string;
  helo: string;
  tls: boolean;
  mailFrom: string;
  recipients: Recipient[];
}

export type Authenticate = (input: { raw: Buffer; ip: string; helo: string; mailFrom: string }) => Promise<AuthResults>;

/** A publish that certainly stored nothing (no stream took it), as opposed to one with no answer. */
export class NotQueued extends Error {
  override name = 'NotQueued';
}

export interface HandOff {
  putRaw(rawId: string, raw: Buffer): Promise<void>;
  deleteRaw(rawId: string): Promise<void>;
  /** Resolves once JetStream acknowledged the work item. */
  publish(item: InboundMail): Promise<void>;
  /** The same, for a report to our bounce domain (mail.feedback). */
  publishFeedback(item: FeedbackMail): Promise<void>;
}

export interface Accepted {
  rawId: string;
  spam: SpamCheck;
}

export class Acceptance {
  constructor(
    private readonly authenticate: Authenticate,
    private readonly spam: SpamScanner,
    private readonly handOff: HandOff,
    private readonly clock: Clock,
    /** Up to this size the raw bytes travel in the work item (one durable write instead of an object and an item). */
    private readonly inlineMaxBytes: number,
    /** Waits before the 2nd, 3rd... try of a work item's publish (see queued). */
    private readonly retryDelaysMs: readonly number[] = [250, 1_000],
  ) {}

  /**
   * Removes the raw object of a work item that certainly was not stored. After a publish with
   * no answer it stays: the item may have been stored without our hearing of it (a late
   * acknowledgement), and a stored message must keep its raw bytes.
   */
  private async dropRaw(err: unknown, rawId: string, log: Logger): Promise<void> {
    if (!(err instanceof NotQueued)) {
      log.warn({ raw_id: rawId }, 'raw object kept: its work item may have been stored');
      return;
    }
    await this.handOff.deleteRaw(rawId).catch(() => log.warn({ raw_id: rawId }, 'orphan raw object left behind'));
  }

  /**
   * Publishes a work item, trying again (same msgID, so JetStream keeps one) when no
   * acknowledgement came: a timeout does not say the item was not stored, and a 451 for
   * an item that was would have the sender send it again as a second message. When every
   * try failed it throws the last error, and NotQueued only if every try was NotQueued (one
   * try with no answer may have stored the item).
   */
  private async queued(publish: () => Promise<void>, log: Logger, rawId: string): Promise<void> {
    let unanswered = false;
    for (let tryNo = 0; ; tryNo++) {
      try {
        await publish();
        return;
      } catch (err) {
        if (!(err instanceof NotQueued)) unanswered = true;
        const delay = this.retryDelaysMs[tryNo];
        if (delay === undefined) throw unanswered && err instanceof NotQueued ? new Error('an earlier try had no answer', { cause: err }) : err;
        log.warn({ err, raw_id: rawId, try: tryNo + 1 }, 'no acknowledgement for the work item: publishing it again (same msgID)');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  async accept(raw: Buffer, env: Envelope, log: Logger): Promise<Accepted> {
    const inboxes = env.recipients.filter((r): r is InboxRecipient => r.kind === 'inbox');
    const reports = env.recipients.filter((r) => r.kind === 'feedback');
    if (!inboxes.length) return this.acceptReport(raw, env, reports.map((r) => r.address), log);
    const accepted = await this.acceptForInboxes(raw, { ...env, recipients: inboxes }, log);
    // A report and a message in one transaction (never seen in practice) are both kept.
    if (reports.length) await this.acceptReport(raw, env, reports.map((r) => r.address), log);
    return accepted;
  }

  /**
   * A delivery or complaint report to our bounce domain: no spam or authentication verdict
   * applies (mail-send matches it to the message by the VERP address and checks the mac).
   */
  private async acceptReport(raw: Buffer, env: Envelope, rcptTo: string[], log: Logger): Promise<Accepted> {
    const rawId = newId('raw');
    const inline = raw.length <= this.inlineMaxBytes;
    const item: FeedbackMail = { raw_id: rawId, received_at: this.clock.now().toISOString(), mail_from: env.mailFrom, rcpt_to: rcptTo, ...(inline ? { raw: raw.toString('base64') } : {}) };
    if (!inline) {
      try {
        await this.handOff.putRaw(rawId, raw);
      } catch (err) {
        log.error({ err, raw_id: rawId }, 'could not store the raw report: answering 451');
        throw new SmtpReply('tryLater', 'storage unavailable');
      }
    }
    try {
      await this.queued(() => this.handOff.publishFeedback(item), log, rawId);
    } catch (err) {
      log.error({ err, raw_id: rawId }, 'could not queue the report: answering 451');
      if (!inline) await this.dropRaw(err, rawId, log);
      throw new SmtpReply('tryLater', 'queue unavailable');
    }
    return { rawId, spam: { score: null, verdict: 'unscanned', reject: false } };
  }

  private async acceptForInboxes(raw: Buffer, env: Omit<Envelope, 'recipients'> & { recipients: InboxRecipient[] }, log: Logger): Promise<Accepted> {
    const rawId = newId('raw');
    const receivedAt = this.clock.now();
    const t0 = performance.now();
    const [auth, spam] = await Promise.all([
      this.authenticate({ raw, ip: env.ip, helo: env.helo, mailFrom: env.mailFrom }),
      this.spam.scan({ raw, ip: env.ip, helo: env.helo, mailFrom: env.mailFrom, recipients: env.recipients.map((r) => r.address), queueId: rawId }),
    ]);
    const t1 = performance.now();
    if (spam.error) log.warn({ raw_id: rawId, reason: spam.error }, 'spam check unavailable: message marked unscanned');
    if (spam.reject) {
      log.info({ raw_id: rawId, score: spam.score, ip: env.ip }, 'rejected as spam');
      throw new SmtpReply('spam');
    }
    // One work item per inbox, whatever the number of addresses that led to it.
    const recipients = [...new Map(env.recipients.map((r) => [r.inbox_id, { address: r.address, inbox_id: r.inbox_id, org_id: r.org_id, env_id: r.env_id }])).values()];
    const item: InboundMail = {
      raw_id: rawId,
      size: raw.length,
      received_at: receivedAt.toISOString(),
      client: { ip: env.ip, helo: env.helo, tls: env.tls },
      mail_from: env.mailFrom,
      recipients,
      auth,
      spam: { score: spam.score, verdict: spam.verdict },
    };
    const inline = raw.length <= this.inlineMaxBytes;
    if (inline) {
      item.raw = raw.toString('base64');
    } else {
      try {
        await this.handOff.putRaw(rawId, raw);
      } catch (err) {
        log.error({ err, raw_id: rawId }, 'could not store the raw message: answering 451');
        throw new SmtpReply('tryLater', 'storage unavailable');
      }
    }
    const t2 = performance.now();
    try {
      await this.queued(() => this.handOff.publish(item), log, rawId);
    } catch (err) {
      log.error({ err, raw_id: rawId }, 'could not queue the message: answering 451');
      if (!inline) await this.dropRaw(err, rawId, log);
      throw new SmtpReply('tryLater', 'queue unavailable');
    }
    const t3 = performance.now();
    log.debug({ raw_id: rawId, checks_ms: Math.round(t1 - t0), store_ms: Math.round(t2 - t1), queue_ms: Math.round(t3 - t2) }, 'accepted');
    return { rawId, spam };
  }
}
