/**
 * Sending one stored outbound message: compose, sign (with the platform's key, or a custom
 * domain's: sending-domains.ts), keep the raw bytes (the object the mailbox message points
 * to), hand it to the provider with our VERP address as envelope sender, then record `sent`
 * and announce message.sent in one transaction. Temporary
 * failures are retried from the work queue; a message the provider accepted is never
 * handed over again (its status says so before the work item is acknowledged). Recipients
 * the provider refused for good are a bounce, and go on the suppression list; a message it
 * refused for good (content, sender, account) is a bounce that suppresses nobody.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import type { EnvelopeOf, OutboundJob } from '@mailroom/contracts';
import { Batched, type Clock, type Logger } from '@mailroom/platform';
import type { RecordSent, SendRepository, StartSending } from '../repo/send.repository';
import type { SendTx } from '../repo/tables';
import { ProviderError, type MailProvider, type RejectedRecipient } from '../providers/provider';
import { newEventId } from './event-ids';
import type { EventSink, Transact } from './ports';
import { compose, MissingAttachment, type AttachmentSource } from './compose';
import { dkimSignature, StreamingDkimHash } from './dkim';
import { SigningUnavailable, type OutboundIdentity } from './sending-domains';
import { before, bounceSubType } from './status';

/** Where what is sent is kept (MAIL_SENT): written as a stream, read back as one. */
export interface RawStore {
  put(name: string, raw: Readable): Promise<void>;
  /** The object's bytes; null when it is not there. */
  open(name: string): Promise<Readable | null>;
  delete(name: string): Promise<void>;
}

/** Passes chunks on, feeding them to the DKIM hash on the way. */
function hashing(hash: StreamingDkimHash): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        hash.update(chunk);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  });
}

/** After this many hand-over attempts a temporarily failing message is given up as a soft bounce. */
export const MAX_ATTEMPTS = 12;

export type SendOutcome = 'sent' | 'already-sent' | 'bounced' | 'retry';

export class OutboundSender {
  /** Hand-overs that start at the same time are recorded in one statement, as are acceptances. */
  private readonly starting = new Batched<StartSending, boolean>((sends) => this.repo.startSending(sends));
  private readonly recording = new Batched<RecordSent, void>(async (sent) => {
    await this.repo.recordSent(sent, before('sent'));
    return sent.map(() => undefined);
  });

  constructor(
    private readonly transact: Transact,
    private readonly repo: SendRepository,
    private readonly provider: MailProvider,
    private readonly raw: RawStore,
    private readonly attachments: AttachmentSource,
    private readonly identity: Pick<OutboundIdentity, 'of'>,
    private readonly outbox: EventSink,
    private readonly clock: Clock,
  ) {}

  /** `logging.log` is read only when something is logged (a consumer makes it on first use). */
  async send(job: OutboundJob, attempt: number, logging: { readonly log: Logger }): Promise<SendOutcome> {
    const recipients = [...job.to, ...job.cc, ...job.bcc];
    const started = await this.starting.call({
      message_id: job.message_id,
      org_id: job.org_id,
      env_id: job.env_id,
      inbox_id: job.inbox_id,
      thread_id: job.thread_id,
      from_address: job.from.address,
      to_addresses: recipients,
      subject: job.subject,
      provider: this.provider.name,
    });
    if (!started) return 'already-sent';
    let composed: Readable;
    try {
      composed = await compose(job, this.attachments);
    } catch (err) {
      if (!(err instanceof MissingAttachment)) throw err;
      // Not expected (objects are stored before the message refers to them): retried, then given up.
      return this.failed(job, recipients, attempt, new ProviderError(err.message, true), logging);
    }
    let signing;
    try {
      signing = await this.identity.of(job);
    } catch (err) {
      composed.destroy();
      if (!(err instanceof SigningUnavailable)) throw err;
      // Its domain deleted, or domains not answering: retried, then given up as a bounce that says why.
      return this.failed(job, recipients, attempt, new ProviderError(err.message, true), logging);
    }
    await this.store(job.raw_id, composed, signing.dkim);
    const raw = await this.raw.open(job.raw_id);
    if (!raw) throw new Error(`sent message ${job.raw_id} of ${job.message_id} was stored but cannot be read`);

    let accepted;
    try {
      accepted = await this.provider.send({ from: signing.returnPath, to: recipients, raw, envelopeId: job.message_id });
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      return this.failed(job, recipients, attempt, err, logging);
    }

    const now = this.clock.now();
    const sent: EnvelopeOf<'message.sent'> = {
      id: newEventId(),
      type: 'message.sent',
      timestamp: now.toISOString(),
      org_id: job.org_id,
      env_id: job.env_id,
      data: {
        message_id: job.message_id,
        thread_id: job.thread_id,
        inbox_id: job.inbox_id,
        from_address: job.from.address,
        to_addresses: recipients,
        subject: job.subject,
        provider_message_id: accepted.providerMessageId,
        sent_at: now.toISOString(),
      },
    };
    const record: RecordSent = {
      message_id: job.message_id,
      sent_at: now,
      provider: this.provider.name,
      provider_message_id: accepted.providerMessageId,
      traceparent: accepted.traceparent ?? null,
      event: this.outbox.eventRow(sent),
    };
    if (!accepted.rejected.length) await this.recording.call(record);
    else {
      // Some recipients refused for good: the bounce is recorded with the acceptance.
      await this.transact(async (trx) => {
        await this.repo.recordSent([record], before('sent'), trx);
        await this.bounce(trx, job, accepted.rejected, 'Permanent');
      });
    }
    this.outbox.kick();
    return 'sent';
  }

  /**
   * Keeps the message as sent, streamed (memory does not grow with its size). Signed, it is
   * read twice: the DKIM body hash needs all of it before the signature, which comes first,
   * so it is stored unsigned while hashed, then copied behind its signature.
   */
  private async store(rawId: string, composed: Readable, dkim: Parameters<typeof dkimSignature>[2] | null | undefined): Promise<void> {
    if (!dkim) return this.raw.put(rawId, composed);
    const unsigned = `${rawId}.unsigned`;
    const hash = new StreamingDkimHash();
    // pipeline: a failed read of an attachment fails the put (and stops the composer).
    await this.raw.put(unsigned, pipeline(composed, hashing(hash), () => undefined));
    const { header, bodyHash } = hash.finish();
    const signature = await dkimSignature(header, bodyHash, dkim, this.clock.now());
    const body = await this.raw.open(unsigned);
    if (!body) throw new Error(`unsigned message ${unsigned} was stored but cannot be read`);
    async function* signed(): AsyncGenerator<Buffer> {
      yield Buffer.from(signature, 'latin1');
      for await (const chunk of body!) yield chunk as Buffer;
    }
    await this.raw.put(rawId, Readable.from(signed()));
    await this.raw.delete(unsigned);
  }

  /**
   * A failed attempt: retried while temporary and attempts remain, else a bounce. Attempts
   * are the hand-overs made (counted on the send), not the work item's deliveries: those
   * also count our own outages (a database or object store down, an ack wait run out), which
   * must not use up the message's tries at the provider.
   */
  private async failed(job: OutboundJob, recipients: string[], delivery: number, err: ProviderError, logging: { readonly log: Logger }): Promise<SendOutcome> {
    const attempts = await this.repo.noteAttempt(job.message_id, err.message.slice(0, 500));
    if (err.temporary && attempts < MAX_ATTEMPTS) {
      logging.log.warn({ message_id: job.message_id, attempt: attempts, delivery, reason: err.message }, 'temporary failure: will retry');
      return 'retry';
    }
    const rejected: RejectedRecipient[] = err.rejected.length
      ? err.rejected
      : recipients.map((address) => ({ address, code: 0, status: '4.4.7', diagnostic: `x-mailroom; gave up after ${attempts} attempts: ${err.message}`, blame: 'message' as const }));
    await this.transact(async (trx) => {
      await this.repo.advance(job.message_id, before('bounced'), { status: 'bounced', bounced_at: this.clock.now() }, trx);
      await this.bounce(trx, job, rejected, err.temporary ? 'Transient' : 'Permanent');
    });
    this.outbox.kick();
    return 'bounced';
  }

  /** Announces a bounce and, when it is permanent, suppresses the recipients. */
  private async bounce(trx: SendTx, job: Pick<OutboundJob, 'message_id' | 'thread_id' | 'inbox_id' | 'org_id' | 'env_id'>, rejected: RejectedRecipient[], type: 'Permanent' | 'Transient'): Promise<void> {
    const now = this.clock.now();
    const event: EnvelopeOf<'message.bounced'> = {
      id: newEventId(),
      type: 'message.bounced',
      timestamp: now.toISOString(),
      org_id: job.org_id,
      env_id: job.env_id,
      data: {
        message_id: job.message_id,
        thread_id: job.thread_id,
        inbox_id: job.inbox_id,
        bounce_type: type,
        bounce_sub_type: type === 'Permanent' && rejected[0]?.blame === 'recipient' ? bounceSubType(rejected[0].status) : 'General',
        bounced_recipients: rejected.map((r) => ({ email_address: r.address, status: r.status, diagnostic_code: r.diagnostic })),
        bounced_at: now.toISOString(),
      },
    };
    await this.outbox.add(trx, event);
    if (type === 'Permanent') {
      for (const r of rejected.filter((x) => x.blame === 'recipient')) await this.repo.suppress({ org_id: job.org_id, env_id: job.env_id, address: r.address, reason: 'hard_bounce', message_id: job.message_id }, trx);
    }
  }
}

