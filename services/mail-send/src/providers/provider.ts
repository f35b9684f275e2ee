/** What sending needs from a mail provider, whichever it is (SMTP relay now; a cloud API next). */
export interface HandOver {
  /** Envelope sender: our VERP address. */
  from: string;
  to: string[];
  raw: Buffer;
  /** Our id for the message, asked back in delivery reports (DSN ENVID). */
  envelopeId: string;
}

export interface RejectedRecipient {
  address: string;
  /** SMTP reply code (550) and enhanced status (5.1.1) when the provider gave them. */
  code: number;
  status: string;
  diagnostic: string;
}

export interface Accepted {
  providerMessageId: string;
  /** Recipients the provider refused outright (the others were accepted). */
  rejected: RejectedRecipient[];
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
