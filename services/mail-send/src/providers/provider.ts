import type { Readable } from 'node:stream';

/** What sending needs from a mail provider, whichever it is (an SMTP relay, Amazon SES). */
export interface HandOver {
  /** Envelope sender: our VERP address. */
  from: string;
  to: string[];
  /** The message: a stream is read once, as the provider sends it (memory bounded whatever its size). */
  raw: Buffer | Readable;
  /** Our message id, asked back in delivery reports (DSN ENVID, SES message tag). */
  envelopeId: string;
}

export interface RejectedRecipient {
  address: string;
  /** SMTP reply code (550) and enhanced status (5.1.1) when the provider gave them. */
  code: number;
  status: string;
  diagnostic: string;
  /**
   * recipient: the address was refused (a hard bounce suppresses it); message: the message or
   * our account was (content, sender, configuration), which says nothing about the address.
   */
  blame: 'recipient' | 'message';
}

export interface Accepted {
  providerMessageId: string;
  /** Recipients the provider refused outright (the others were accepted). */
  rejected: RejectedRecipient[];
  /** The W3C traceparent of the hand-over's span (telemetry on): kept with the send, so the reports about it link to it. */
  traceparent?: string;
}

/** The provider refused the whole message, for good (5xx) or for now (4xx, unreachable). */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly temporary: boolean,
    readonly rejected: RejectedRecipient[] = [],
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface MailProvider {
  readonly name: string;
  send(message: HandOver): Promise<Accepted>;
  close(): Promise<void>;
}
