/**
 * Every SMTP reply the edge gives on failure, in one table: the code, the enhanced status
 * code (RFC 3463) and the text. 4xx means "try again later" (the sender keeps the mail),
 * 5xx "do not retry". The edge never answers 250 before the mail is stored.
 */
export const REPLIES = {
  tooManyConnections: { code: 421, enhanced: '4.7.0', text: 'Too many connections from your address; try again later' },
  rateLimited: { code: 451, enhanced: '4.7.1', text: 'Too many messages from your address; try again later' },
  tryLater: { code: 451, enhanced: '4.3.0', text: 'Temporary failure; try again later' },
  tooManyRecipients: { code: 452, enhanced: '4.5.3', text: 'Too many recipients' },
  noSuchUser: { code: 550, enhanced: '5.1.1', text: 'No such mailbox' },
  relayDenied: { code: 550, enhanced: '5.7.1', text: 'Relaying denied: not a domain of this server' },
  badAddress: { code: 553, enhanced: '5.1.3', text: 'Malformed address' },
  tooBig: { code: 552, enhanced: '5.3.4', text: 'Message exceeds the size limit' },
  bareLineEnding: { code: 550, enhanced: '5.6.0', text: 'Message contains a bare CR or LF; lines must end with CRLF' },
  emptyMessage: { code: 550, enhanced: '5.6.0', text: 'Message is empty: no header, no body' },
  spam: { code: 550, enhanced: '5.7.1', text: 'Message rejected as spam' },
  noRecipients: { code: 554, enhanced: '5.5.1', text: 'No valid recipients' },
} as const satisfies Record<string, { code: number; enhanced: string; text: string }>;

export type ReplyName = keyof typeof REPLIES;

/** An Error smtp-server turns into a reply with `responseCode`. */
export class SmtpReply extends Error {
  readonly responseCode: number;
  constructor(
    readonly reply: ReplyName,
    detail?: string,
  ) {
    const r = REPLIES[reply];
    super(`${r.enhanced} ${r.text}${detail ? ` (${detail})` : ''}`);
    this.responseCode = r.code;
    this.name = 'SmtpReply';
  }
}
