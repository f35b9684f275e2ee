/** What a report says, as parseFeedback returns it: a delivery report, a complaint, or neither. */

export type DsnAction = 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';
export type BounceType = 'Permanent' | 'Transient';
export type BounceSubType = 'General' | 'NoEmail' | 'Suppressed';

export interface DsnRecipient {
  /** The recipient we addressed (Original-Recipient when it is an address, else Final-Recipient), lower case, no "rfc822;". */
  address: string;
  action: DsnAction;
  /** Enhanced status code (RFC 3463), e.g. 5.1.1; derived from the reply code and text when the report gave none. */
  status: string;
  diagnosticCode: string;
  /** null when the message was delivered, relayed or expanded. */
  bounceType: BounceType | null;
  bounceSubType: BounceSubType | null;
}

export interface DsnFeedback {
  kind: 'dsn';
  recipients: DsnRecipient[];
  /** Original-Envelope-Id: the ENVID we gave at MAIL FROM. */
  envelopeId: string | null;
  originalMessageId: string | null;
  reportingMta: string | null;
  verpToken: string | null;
}

/**
 * A feedback report (ARF or a vendor's): what it says, not what it means to us. Not every
 * type is a complaint (not-spam, opt-out, auth-failure): domain/attribution.ts decides.
 */
export interface ComplaintFeedback {
  kind: 'complaint';
  /** abuse, fraud, opt-out, not-spam, virus, auth-failure, other, ... (lower case). */
  feedbackType: string;
  /**
   * The original recipients the report names (Original-Rcpt-To, Removal-Recipient, JMRP's
   * X-HmXmrOriginalRecipient, the sender of an unsubscribe request), lower case; empty when it
   * names none. Never taken from the original's To or Cc: they list everyone the message was
   * addressed to, not who reported it (and feedback loops redact them).
   */
  recipients: string[];
  originalMessageId: string | null;
  envelopeId: string | null;
  originalMailFrom: string | null;
  verpToken: string | null;
}

export interface OtherFeedback {
  kind: 'other';
}

export type Feedback = DsnFeedback | ComplaintFeedback | OtherFeedback;
