/**
 * A mail provider's SMTP relay for tests (the "test provider"): our outbound service relays
 * mail through it, and it reports back the way a provider does, by mail over SMTP to our edge:
 * RFC 3464 delivery status notifications (delivered, delayed, failed) and RFC 5965 (ARF)
 * feedback reports (abuse, not-spam, opt-out), from MAILER-DAEMON with the null envelope sender,
 * to the relayed message's envelope sender. As an MTA reports each delivery to a destination,
 * DSNs come one per destination domain (in RCPT TO order) and kind, so a message to two domains
 * gets two success DSNs. Owns what happens to each recipient (RelayBehaviour), the replies it
 * gives, and the content of each report; the MIME structure is nodemailer's (MimeNode).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import addressparser from 'nodemailer/lib/addressparser';
import MimeNode from 'nodemailer/lib/mime-node';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { waitFor } from './wait';

/**
 * reject / tempfail: at RCPT TO; reject-content: the whole message at the end of DATA (554 5.7.1).
 * After delivery, an ARF report: complain (abuse, Original-Rcpt-To names the recipient),
 * complain-unnamed (abuse naming no recipient, as feedback loops that redact them send),
 * not-spam (RFC 6430, Original-Rcpt-To), opt-out (Removal-Recipient names the recipient).
 */
export type RelayBehaviour = 'deliver' | 'bounce' | 'defer-then-bounce' | 'complain' | 'complain-unnamed' | 'not-spam' | 'opt-out' | 'reject' | 'tempfail' | 'reject-content';

/** Delivered, then reported by the recipient's feedback loop: the report each sends. */
const FEEDBACK: Partial<Record<RelayBehaviour, { type: 'abuse' | 'not-spam' | 'opt-out'; field: 'Original-Rcpt-To' | 'Removal-Recipient' | null; says: string }>> = {
  complain: { type: 'abuse', field: 'Original-Rcpt-To', says: 'marked it as spam' },
  'complain-unnamed': { type: 'abuse', field: null, says: 'marked it as spam' },
  'not-spam': { type: 'not-spam', field: 'Original-Rcpt-To', says: 'marked it as not spam' },
  'opt-out': { type: 'opt-out', field: 'Removal-Recipient', says: 'asked for no more mail from this sender' },
};

export interface TestRelayOptions {
  /** Where reports go: our SMTP edge (host, port). Reports are sent to the envelope sender (MAIL FROM) of the relayed message, which is a VERP address on our bounce domain. */
  feedbackTo: { host: string; port: number };
  /** Per recipient (lower-case address) what happens; default 'deliver'. Asked once, at RCPT TO. */
  behaviour?: (rcpt: string) => RelayBehaviour;
  /** Name of this relay in its greeting, Reporting-MTA, and queue ids. */
  hostname?: string;
}

export interface RelayedRecipient {
  /** As given in RCPT TO. */
  address: string;
  behaviour: RelayBehaviour;
  /** RFC 3461 NOTIFY, upper case; undefined when the sender gave none. */
  notify?: string[];
  /** RFC 3461 ORCPT, xtext-decoded, e.g. `rfc822;ada@example.com`. */
  orcpt?: string;
}

export interface RelayedMessage {
  queueId: string;
  /** '' for the null sender. */
  mailFrom: string;
  rcptTo: string[];
  /** NOTIFY is per recipient in SMTP: here the values of all recipients (see `recipients`). */
  dsn: { notify?: string[]; ret?: string; envid?: string };
  raw: Buffer;
  receivedAt: Date;
  recipients: RelayedRecipient[];
  /** The user name the sender authenticated with, if it did (any credentials are accepted). */
  authUser?: string;
}

export type DsnAction = 'delivered' | 'delayed' | 'failed';

export interface SentReport {
  type: 'dsn' | 'arf';
  to: string;
  /** The report exactly as handed to the edge. */
  raw: Buffer;
  /** The relayed message it is about. */
  queueId: string;
  /** For a DSN. */
  action?: DsnAction;
  /** For an ARF report: its Feedback-Type. */
  feedbackType?: string;
}

export interface TestRelay {
  port: number;
  url: string; // smtp://127.0.0.1:<port>
  received: RelayedMessage[];
  /** Reports the edge accepted (250), in the order they were sent. */
  reportsSent: SentReport[];
  /** Reports that could not be built or sent; the relay goes on. */
  reportErrors: Error[];
  /** Resolves once n messages were accepted (bounded wait), with the first n. */
  waitForMessages(n: number, timeoutMs?: number): Promise<RelayedMessage[]>;
  /** Resolves once n reports were sent or failed (bounded wait), with those sent. */
  waitForReports(n: number, timeoutMs?: number): Promise<SentReport[]>;
  /** Stops accepting, ends stragglers with 421 after a second, then waits for reports in flight. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const DEFAULT_HOSTNAME = 'relay.provider.test';
const CRLF = '\r\n';
/** How long the relay pretends to keep retrying a deferred message (Will-Retry-Until). */
const RETRY_PERIOD_MS = 5 * 24 * 3600 * 1000;
/** A documentation address (RFC 5737) for the remote MX it "connects" to. */
const REMOTE_MX_IP = '192.0.2.25';

/** Every refusal the relay gives, in one table (code, RFC 3463 enhanced code, text). */
const REPLIES = {
  reject: { code: 550, enhanced: '5.1.1', text: 'Recipient address rejected: User unknown in relay recipient table' },
  tempfail: { code: 451, enhanced: '4.3.0', text: 'Temporary failure; try again later' },
  content: { code: 554, enhanced: '5.7.1', text: 'Message rejected: content policy' },
} as const satisfies Record<string, { code: number; enhanced: string; text: string }>;

/** An Error smtp-server turns into a reply with `responseCode`. */
class RelayReply extends Error {
  readonly responseCode: number;
  constructor(reply: keyof typeof REPLIES, rcpt: string, detail?: string) {
    const r = REPLIES[reply];
    super(`${r.enhanced} <${rcpt}>: ${r.text}${detail ? ` (${detail})` : ''}`);
    this.responseCode = r.code;
    this.name = 'RelayReply';
  }
}

/** What the remote side "said" for a recipient, as a DSN reports it. */
interface Outcome {
  action: DsnAction;
  status: string;
  remoteMta?: string;
  diagnostic: string;
  /** One line for the human-readable part. */
  summary: string;
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

function outcome(rcpt: RelayedRecipient, action: DsnAction): Outcome {
  const mx = `mx.${domainOf(rcpt.address) || 'invalid'}`;
  const unreachable = `connect to ${mx}[${REMOTE_MX_IP}]:25: Connection timed out`;
  switch (action) {
    case 'delivered': {
      const reply = `250 2.0.0 Ok: queued as ${randomBytes(5).toString('hex').toUpperCase()}`;
      return { action, status: '2.0.0', remoteMta: `dns; ${mx}`, diagnostic: `smtp; ${reply}`, summary: `delivery via ${mx}: ${reply}` };
    }
    case 'delayed':
      // Never connected, so no SMTP reply to quote: an X- diagnostic type, as Postfix does.
      return { action, status: '4.4.1', diagnostic: `X-Relay; ${unreachable}`, summary: `${unreachable}; still trying` };
    case 'failed':
      if (rcpt.behaviour === 'bounce') {
        const reply = `550 5.1.1 <${rcpt.address}>: Recipient address rejected: User unknown`;
        return { action, status: '5.1.1', remoteMta: `dns; ${mx}`, diagnostic: `smtp; ${reply}`, summary: `host ${mx}[${REMOTE_MX_IP}] said: ${reply}` };
      }
      // A deferred message that ran out of time: X.4.7 "delivery time expired" (RFC 3463).
      return { action, status: '4.4.7', diagnostic: `X-Relay; ${unreachable}`, summary: `delivery time expired; last error: ${unreachable}` };
  }
}

/** RFC 5322 date-time, as nodemailer writes its Date header. */
function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

/** The relay takes whatever a client sends; what it sends back always ends its lines with CRLF. */
function toCrlf(bytes: Buffer): Buffer {
  return Buffer.from(bytes.toString('latin1').replace(/\r\n|\r|\n/g, CRLF), 'latin1');
}

/** The header block of a message, with the CRLF that ends its last field. */
function headerBlock(raw: Buffer): Buffer {
  const end = raw.indexOf('\r\n\r\n');
  return end === -1 ? raw : raw.subarray(0, end + 2);
}

/** The unfolded value of the first header field called `name`. */
function headerValue(headers: Buffer, name: string): string | undefined {
  const prefix = `${name.toLowerCase()}:`;
  const line = headers
    .toString('utf8')
    .replace(/\r\n(?=[ \t])/g, '')
    .split(CRLF)
    .find((l) => l.toLowerCase().startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

/** Content nodemailer may label 7bit: ASCII without NUL, lines within RFC 5322's 998 octets. */
function isSevenBit(bytes: Buffer | string): boolean {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('latin1');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0 || c > 0x7f) return false;
  }
  return text.split(/\r\n|\r|\n/).every((l) => l.length <= 998);
}

/** RFC 3461 4.1: with no NOTIFY the relay reports failures and delays, never success. */
function wants(rcpt: RelayedRecipient, what: 'SUCCESS' | 'FAILURE' | 'DELAY'): boolean {
  return rcpt.notify ? rcpt.notify.includes(what) : what !== 'SUCCESS';
}

interface Arrival {
  message: RelayedMessage;
  helo: string;
  clientIp: string;
}

/** The message/delivery-status body: per-message fields, then a block per recipient (RFC 3464 2.1). */
function deliveryStatus(hostname: string, arrival: Arrival, outcomes: (Outcome & { rcpt: RelayedRecipient })[], now: Date): string {
  const { message } = arrival;
  const perMessage = [
    ...(message.dsn.envid !== undefined ? [`Original-Envelope-Id: ${message.dsn.envid}`] : []),
    `Reporting-MTA: dns; ${hostname}`,
    `Received-From-MTA: dns; ${arrival.helo && !arrival.helo.startsWith('[') ? `${arrival.helo} ([${arrival.clientIp}])` : `[${arrival.clientIp}]`}`,
    `Arrival-Date: ${rfc5322Date(message.receivedAt)}`,
  ];
  const perRecipient = outcomes.map(({ rcpt, ...o }) => {
    return [
      ...(rcpt.orcpt ? [`Original-Recipient: ${rcpt.orcpt}`] : []),
      `Final-Recipient: rfc822; ${rcpt.address}`,
      `Action: ${o.action}`,
      `Status: ${o.status}`,
      ...(o.remoteMta ? [`Remote-MTA: ${o.remoteMta}`] : []),
      `Diagnostic-Code: ${o.diagnostic}`,
      `Last-Attempt-Date: ${rfc5322Date(now)}`,
      `Final-Log-ID: ${message.queueId}`,
      ...(o.action === 'delayed' ? [`Will-Retry-Until: ${rfc5322Date(new Date(message.receivedAt.getTime() + RETRY_PERIOD_MS))}`] : []),
    ];
  });
  return [perMessage, ...perRecipient].map((block) => block.join(CRLF) + CRLF).join(CRLF);
}

const DSN_TEXT: Record<DsnAction, { subject: string; intro: string }> = {
  delivered: { subject: 'Successful Mail Delivery Report', intro: 'Your message was successfully delivered to the destination(s) listed below.' },
  delayed: {
    subject: 'Delayed Mail (still being retried)',
    intro: 'Your message could not be delivered for some time. It will be retried until it is too old; you do not need to resend it.',
  },
  failed: { subject: 'Undelivered Mail Returned to Sender', intro: 'Your message could not be delivered to one or more recipients. It is attached below.' },
};

interface ReportPart {
  contentType: 'message/delivery-status' | 'message/feedback-report' | 'message/rfc822' | 'text/rfc822-headers';
  description: string;
  content: Buffer | string;
}

/**
 * A multipart/report (RFC 6522) built with nodemailer's MimeNode, the tree MailComposer builds
 * on: MailComposer always makes the root multipart/mixed and gives every non-text part a
 * Content-Disposition, which real DSNs do not carry (and which makes parsers such as mailparser
 * inline a message/rfc822 part into the text). Parts carry a Content-Description, as Postfix's do.
 */
async function composeReport(opts: {
  hostname: string;
  to: string;
  subject: string;
  reportType: 'delivery-status' | 'feedback-report';
  text: string;
  parts: ReportPart[];
}): Promise<Buffer> {
  const root = new MimeNode(`multipart/report; report-type=${opts.reportType}`);
  root.setHeader({
    From: { name: opts.reportType === 'feedback-report' ? 'Feedback Loop' : 'Mail Delivery System', address: `MAILER-DAEMON@${opts.hostname}` },
    To: opts.to,
    Subject: opts.subject,
    // RFC 3834 5: a DSN is an automatic reply; this keeps auto-responders from answering it.
    'Auto-Submitted': opts.reportType === 'feedback-report' ? 'auto-generated' : 'auto-replied',
  });
  root.createChild('text/plain').setHeader('Content-Description', 'Notification').setContent(opts.text);
  for (const part of opts.parts) {
    const sevenBit = isSevenBit(part.content);
    if (part.contentType.startsWith('message/')) {
      // message/* is never encoded (RFC 2046 5.2.1): the label says what the bytes are.
      root
        .createChild(part.contentType)
        .setHeader({ 'Content-Description': part.description, 'Content-Transfer-Encoding': sevenBit ? '7bit' : '8bit' })
        .setContent(part.content);
    } else if (sevenBit) {
      // MimeNode quoted-printable-encodes any text with a line over 76 octets, as header lines
      // often are, while text/rfc822-headers wants QP only for broken headers: this one part
      // (three header lines and the content) is written out by hand.
      const head = [`Content-Type: ${part.contentType}`, `Content-Description: ${part.description}`, 'Content-Transfer-Encoding: 7bit'];
      root.createChild(part.contentType).setRaw(Buffer.concat([Buffer.from(head.join(CRLF) + CRLF + CRLF), Buffer.from(part.content)]));
    } else {
      root.createChild(part.contentType).setHeader('Content-Description', part.description).setContent(part.content);
    }
  }
  return root.build();
}

export async function startTestRelay(opts: TestRelayOptions): Promise<TestRelay> {
  const hostname = opts.hostname ?? DEFAULT_HOSTNAME;
  const behaviourOf = opts.behaviour ?? (() => 'deliver' as const);
  const received: RelayedMessage[] = [];
  const reportsSent: SentReport[] = [];
  const reportErrors: Error[] = [];
  const inFlight = new Set<Promise<void>>();
  /** Per session, the recipients accepted in the current transaction, by lower-case address. */
  const transactions = new Map<string, Map<string, RelayedRecipient>>();

  const transport = nodemailer.createTransport({
    host: opts.feedbackTo.host,
    port: opts.feedbackTo.port,
    secure: false,
    ignoreTLS: true,
    name: hostname,
    connectionTimeout: 5_000,
    greetingTimeout: 5_000,
    socketTimeout: 10_000,
  });

  function newQueueId(): string {
    return `${randomBytes(6).toString('hex').toUpperCase()}@${hostname}`;
  }

  /** Hands one report to the edge; a failure is recorded, never thrown. */
  async function send(report: Omit<SentReport, 'raw'>, build: () => Promise<Buffer>): Promise<void> {
    try {
      const raw = await build();
      await transport.sendMail({ envelope: { from: '', to: [report.to], use8BitMime: !isSevenBit(raw) }, raw });
      reportsSent.push({ ...report, raw });
    } catch (err) {
      reportErrors.push(err instanceof Error ? err : new Error(String(err)));
    }
  }

  function dsn(arrival: Arrival, rcpts: RelayedRecipient[], action: DsnAction): Promise<void> {
    const { message } = arrival;
    return send({ type: 'dsn', to: message.mailFrom, queueId: message.queueId, action }, () => {
      const now = new Date();
      const headers = toCrlf(headerBlock(message.raw));
      // RFC 3461 4.3: RET only applies to failures; other DSNs return the headers alone.
      const full = action === 'failed' && message.dsn.ret !== 'HDRS';
      const outcomes = rcpts.map((rcpt) => ({ rcpt, ...outcome(rcpt, action) }));
      const lines = outcomes.map((o) => `<${o.rcpt.address}>: ${o.summary}`);
      return composeReport({
        hostname,
        to: message.mailFrom,
        subject: DSN_TEXT[action].subject,
        reportType: 'delivery-status',
        text: [`This is the mail system at host ${hostname}.`, '', DSN_TEXT[action].intro, '', ...lines, ''].join(CRLF),
        parts: [
          { contentType: 'message/delivery-status', description: 'Delivery report', content: deliveryStatus(hostname, arrival, outcomes, now) },
          full
            ? { contentType: 'message/rfc822', description: 'Undelivered Message', content: toCrlf(message.raw) }
            : { contentType: 'text/rfc822-headers', description: action === 'failed' ? 'Undelivered Message Headers' : 'Message Headers', content: headers },
        ],
      });
    });
  }

  /** RFC 5965: one feedback report per reporting recipient, with the whole message. */
  function arf(arrival: Arrival, rcpt: RelayedRecipient): Promise<void> {
    const { message } = arrival;
    const feedback = FEEDBACK[rcpt.behaviour] ?? FEEDBACK.complain!;
    return send({ type: 'arf', to: message.mailFrom, queueId: message.queueId, feedbackType: feedback.type }, () => {
      const headers = headerBlock(message.raw);
      const author = addressparser(headerValue(headers, 'From') ?? '', { flatten: true })[0]?.address ?? '';
      const reportedDomain = domainOf(author) || domainOf(message.mailFrom);
      const fields = [
        `Feedback-Type: ${feedback.type}`,
        `User-Agent: ${hostname}-FBL/1.0`,
        'Version: 1',
        ...(message.dsn.envid !== undefined ? [`Original-Envelope-Id: ${message.dsn.envid}`] : []),
        `Original-Mail-From: <${message.mailFrom}>`,
        ...(feedback.field ? [`${feedback.field}: <${rcpt.address}>`] : []),
        `Arrival-Date: ${rfc5322Date(message.receivedAt)}`,
        `Reporting-MTA: dns; ${hostname}`,
        `Source-IP: ${arrival.clientIp}`,
        `Reported-Domain: ${reportedDomain}`,
      ];
      return composeReport({
        hostname,
        to: message.mailFrom,
        subject: `${feedback.type === 'abuse' ? 'Abuse' : 'Feedback'} report for a message from ${reportedDomain}`,
        reportType: 'feedback-report',
        text: [
          `This is an email ${feedback.type} report for a message received from IP ${arrival.clientIp}`,
          `on ${rfc5322Date(message.receivedAt)}.`,
          `${feedback.field ? `The recipient <${rcpt.address}>` : 'A recipient'} ${feedback.says}.`,
          '',
        ].join(CRLF),
        parts: [
          { contentType: 'message/feedback-report', description: 'Feedback report', content: fields.join(CRLF) + CRLF },
          { contentType: 'message/rfc822', description: 'Reported message', content: toCrlf(message.raw) },
        ],
      });
    });
  }

  /**
   * After the 250, per destination domain (in RCPT TO order) in the order a provider sends
   * them: delivered, delayed, failed; then the feedback reports.
   */
  async function report(arrival: Arrival): Promise<void> {
    const { message } = arrival;
    if (!message.mailFrom) return; // RFC 3461 5.2: nothing goes back to the null sender
    const domains = [...new Set(message.recipients.map((r) => domainOf(r.address)))];
    for (const domain of domains) {
      const rcpts = message.recipients.filter((r) => domainOf(r.address) === domain);
      const delivered = rcpts.filter((r) => (r.behaviour === 'deliver' || FEEDBACK[r.behaviour] !== undefined) && wants(r, 'SUCCESS'));
      const delayed = rcpts.filter((r) => r.behaviour === 'defer-then-bounce' && wants(r, 'DELAY'));
      const failed = rcpts.filter((r) => (r.behaviour === 'bounce' || r.behaviour === 'defer-then-bounce') && wants(r, 'FAILURE'));
      if (delivered.length) await dsn(arrival, delivered, 'delivered');
      if (delayed.length) await dsn(arrival, delayed, 'delayed');
      if (failed.length) await dsn(arrival, failed, 'failed');
    }
    for (const r of message.recipients.filter((x) => FEEDBACK[x.behaviour] !== undefined)) await arf(arrival, r);
  }

  function accept(session: SMTPServerSession, raw: Buffer): RelayedMessage {
    const decided = transactions.get(session.id) ?? new Map<string, RelayedRecipient>();
    const recipients = session.envelope.rcptTo
      .map((a) => decided.get(a.address.toLowerCase()))
      .filter((r): r is RelayedRecipient => r !== undefined);
    const notify = [...new Set(recipients.flatMap((r) => r.notify ?? []))];
    const user: unknown = session.user;
    const message: RelayedMessage = {
      queueId: newQueueId(),
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      rcptTo: recipients.map((r) => r.address),
      dsn: {
        notify: notify.length ? notify : undefined,
        ret: session.envelope.dsn?.ret ?? undefined,
        envid: session.envelope.dsn?.envid ?? undefined,
      },
      raw,
      receivedAt: new Date(),
      recipients,
      authUser: typeof user === 'string' ? user : undefined,
    };
    received.push(message);
    const work = report({ message, helo: session.hostNameAppearsAs ?? '', clientIp: session.remoteAddress }).catch((err: unknown) => {
      reportErrors.push(err instanceof Error ? err : new Error(String(err)));
    });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
    return message;
  }

  const server: SMTPServer = new SMTPServer({
    name: hostname,
    banner: 'ESMTP test relay',
    // smtp-server hides DSN unless told; with it shown it parses RET/ENVID and NOTIFY/ORCPT.
    hideDSN: false,
    // Our own enhanced codes in the reply text, as the edge does (smtp-server would add 2.6.0 to the 250).
    hideENHANCEDSTATUSCODES: true,
    disabledCommands: ['STARTTLS'],
    hideSTARTTLS: true,
    // A provider wants credentials; this one takes any, so a sender configured with them works.
    authOptional: true,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    closeTimeout: 1_000,
    logger: false,

    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' });
    },

    onMailFrom(_address, session, callback) {
      transactions.set(session.id, new Map());
      callback();
    },

    onRcptTo(address: SMTPServerAddress, session, callback) {
      let behaviour: RelayBehaviour;
      try {
        behaviour = behaviourOf(address.address.toLowerCase());
      } catch (err) {
        return callback(new RelayReply('tempfail', address.address, `behaviour failed: ${String(err)}`));
      }
      if (behaviour === 'reject') return callback(new RelayReply('reject', address.address));
      if (behaviour === 'tempfail') return callback(new RelayReply('tempfail', address.address));
      const rcpts = transactions.get(session.id) ?? new Map<string, RelayedRecipient>();
      rcpts.set(address.address.toLowerCase(), { address: address.address, behaviour, notify: address.dsn?.notify, orcpt: address.dsn?.orcpt });
      transactions.set(session.id, rcpts);
      callback();
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const refusing = [...(transactions.get(session.id)?.values() ?? [])].find((r) => r.behaviour === 'reject-content');
        if (refusing) return callback(new RelayReply('content', refusing.address));
        // Stored (in `received`) before the 250 goes out.
        const message = accept(session, Buffer.concat(chunks));
        callback(null, `2.0.0 Ok: queued as ${message.queueId}`);
      });
    },

    onClose(session) {
      transactions.delete(session.id);
    },
  });
  server.on('error', () => undefined); // a client's broken connection is not the relay's failure

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, HOST, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    port,
    url: `smtp://${HOST}:${port}`,
    received,
    reportsSent,
    reportErrors,
    waitForMessages(n, timeoutMs = 10_000) {
      return waitFor(() => received.length >= n && received.slice(0, n), { timeoutMs, what: `${n} relayed message(s)` });
    },
    waitForReports(n, timeoutMs = 10_000) {
      return waitFor(() => reportsSent.length + reportErrors.length >= n && [...reportsSent], {
        timeoutMs,
        what: `${n} report(s) sent or failed`,
      });
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...inFlight]);
      transport.close();
    },
  };
}
