/**
 * The SMTP relay provider (any smarthost: Postfix, a cloud provider's SMTP). Asks for
 * delivery reports (RFC 3461: NOTIFY=SUCCESS,FAILURE,DELAY, ENVID, RET=HDRS) so delivery,
 * bounce and delay come back to our VERP address. The relay's queue id is the provider
 * message id.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { ProviderError, type Accepted, type HandOver, type MailProvider, type RejectedRecipient } from './provider';

const QUEUE_ID = /queued as <?([^\s>]+)>?/i;
const ENHANCED = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

interface SmtpError extends Error {
  code?: string;
  /** The command the relay answered: RCPT TO refusals are about recipients, the others about the message. */
  command?: string;
  responseCode?: number;
  response?: string;
  rejectedErrors?: { recipient?: string; responseCode?: number; response?: string }[];
}

function rejectedFrom(err: SmtpError, to: string[]): RejectedRecipient[] {
  const errors = err.rejectedErrors?.length ? err.rejectedErrors : [{ responseCode: err.responseCode, response: err.response, recipient: undefined }];
  return errors.flatMap((e) => {
    const response = e.response ?? err.message;
    const code = e.responseCode ?? 0;
    const status = ENHANCED.exec(response)?.[1] ?? (code >= 500 ? '5.0.0' : '4.0.0');
    const addresses = e.recipient ? [e.recipient] : to;
    const blame = e.recipient || /^RCPT/i.test(err.command ?? '') ? ('recipient' as const) : ('message' as const);
    return addresses.map((address) => ({ address: address.toLowerCase(), code, status, diagnostic: `smtp; ${response}`, blame }));
  });
}

export class SmtpRelayProvider implements MailProvider {
  readonly name = 'smtp';
  private readonly transport: Transporter<SMTPTransport.SentMessageInfo>;

  constructor(relayUrl: string, hostname: string) {
    const url = new URL(relayUrl);
    this.transport = nodemailer.createTransport({
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)),
      secure: url.protocol === 'smtps:',
      name: hostname,
      pool: true,
      maxConnections: 8,
      // Credentials never cross in the clear: without implicit TLS the relay must offer STARTTLS.
      ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }, requireTLS: url.protocol !== 'smtps:' } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 60_000,
    });
  }

  async send(message: HandOver): Promise<Accepted> {
    let info: SMTPTransport.SentMessageInfo;
    try {
      info = await this.transport.sendMail({
        envelope: { from: message.from, to: message.to },
        raw: message.raw,
        dsn: { id: message.envelopeId, return: 'headers', notify: ['success', 'failure', 'delay'] },
      });
    } catch (err) {
      const e = err as SmtpError;
      const code = e.responseCode ?? e.rejectedErrors?.[0]?.responseCode;
      // 5xx for the message or for every recipient: final. Anything else (4xx, network): try again later.
      const permanent = code !== undefined && code >= 500 && code < 600;
      throw new ProviderError(e.message, !permanent, permanent ? rejectedFrom(e, message.to) : []);
    }
    const queueId = QUEUE_ID.exec(info.response)?.[1] ?? info.messageId;
    const rejected = (info.rejectedErrors ?? []).length
      ? rejectedFrom({ name: 'rejected', message: info.response, rejectedErrors: info.rejectedErrors } as SmtpError, [])
      : info.rejected.map((address) => ({ address: String(address).toLowerCase(), code: 550, status: '5.0.0', diagnostic: 'smtp; rejected', blame: 'recipient' as const }));
    return { providerMessageId: queueId, rejected };
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
