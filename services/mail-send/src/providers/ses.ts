/**
 * Amazon SES (API v2, raw send). The message goes as the bytes we composed and signed; the
 * envelope recipients are given explicitly (Bcc is in no header). SES picks the envelope
 * sender itself (its own bounce domain, or the identity's custom MAIL FROM), so reports
 * come back as SNS notifications, not to our VERP address: each message carries our id as
 * the `mailroom_message_id` tag (in event-publishing notifications) and SES's MessageId is
 * the provider message id (in every notification). Throttling, server faults and network
 * errors are temporary; a refusal of the message (content, unverified sender, bad request)
 * is final and says nothing about the recipients.
 */
import { buffer } from 'node:stream/consumers';
import { SESv2Client, SendEmailCommand, SESv2ServiceException } from '@aws-sdk/client-sesv2';
import { ProviderError, type Accepted, type HandOver, type MailProvider } from './provider';

export const MESSAGE_TAG = 'mailroom_message_id';

export interface SesOptions {
  region: string;
  /** Another endpoint than AWS's (an SES emulator, tests). */
  endpoint?: string | undefined;
  /** Configuration set whose event destination publishes to the SNS topic(s) we subscribe to. */
  configurationSet?: string | undefined;
  /** Absent: the SDK's credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/** Refusals that will not go away by sending again (the others are throttling or faults). */
const FINAL = new Set(['MessageRejected', 'MailFromDomainNotVerifiedException', 'BadRequestException', 'NotFoundException', 'LimitExceededException']);

export class SesProvider implements MailProvider {
  readonly name = 'ses';
  private readonly client: SESv2Client;

  constructor(private readonly opts: SesOptions) {
    this.client = new SESv2Client({
      region: opts.region,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      maxAttempts: 1, // retries are the work queue's, with its backoff
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 60_000 },
    });
  }

  async send(message: HandOver): Promise<Accepted> {
    let out;
    try {
      out = await this.client.send(
        new SendEmailCommand({
          Destination: { ToAddresses: message.to },
          // SES takes the message whole in one request (40 MB at most): a stream is read into memory here.
          Content: { Raw: { Data: Buffer.isBuffer(message.raw) ? message.raw : await buffer(message.raw) } },
          EmailTags: [{ Name: MESSAGE_TAG, Value: message.envelopeId }],
          ...(this.opts.configurationSet ? { ConfigurationSetName: this.opts.configurationSet } : {}),
        }),
      );
    } catch (err) {
      const name = err instanceof SESv2ServiceException ? err.name : '';
      const final = FINAL.has(name);
      const text = `ses; ${name || 'error'}: ${(err as Error).message}`;
      throw new ProviderError(text, !final, final ? message.to.map((address) => ({ address, code: 554, status: '5.3.0', diagnostic: text, blame: 'message' as const })) : []);
    }
    if (!out.MessageId) throw new ProviderError('ses; SendEmail answered without a MessageId', true);
    return { providerMessageId: out.MessageId, rejected: [] };
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
