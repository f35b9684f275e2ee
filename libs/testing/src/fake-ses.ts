/**
 * Amazon SES and SNS as seen from mail-send, over real HTTP on loopback: the SESv2
 * SendEmail API (raw content) at `url` (SES_ENDPOINT), and SNS's side of notifications:
 * messages signed with a certificate served under `snsPrefix` (SNS_TRUSTED_URL_PREFIX),
 * POSTed to the endpoint given with notifyTo, a subscription confirmation whose
 * SubscribeURL is answered here. Per recipient it delivers, bounces (hard, soft, or on the
 * account suppression list), complains (or reports not-spam), throttles once, or refuses the
 * message. As SES does, each recipient's delivery or bounce is its own notification, posted
 * in the order of the recipients, then the complaints. Like SNS, a notification answered with
 * a server error is posted again (a few times, a moment apart).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createSign, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { waitFor } from './wait';

/** not-spam: delivered, then a Complaint whose complaintFeedbackType is not-spam. */
export type SesBehaviour = 'deliver' | 'bounce' | 'soft-bounce' | 'suppressed' | 'complain' | 'not-spam' | 'throttle-once' | 'reject-content';

export interface FakeSesOptions {
  /** Per recipient (lower case); default deliver. A message goes by its first non-deliver recipient's behaviour for refusals. */
  behaviour?: (rcpt: string) => SesBehaviour;
  /** true (default): event publishing (eventType, our message tag); false: identity notifications (notificationType, no tags). */
  eventPublishing?: boolean;
  topicArn?: string;
}

export interface SesSent {
  messageId: string;
  raw: Buffer;
  to: string[];
  tags: Record<string, string>;
  configurationSet: string | undefined;
}

export interface SnsPost {
  type: string;
  body: string;
  /** The endpoint's answer to each attempt. */
  statuses: number[];
}

export interface FakeSes {
  /** SES_ENDPOINT. */
  url: string;
  /** SNS_TRUSTED_URL_PREFIX: the certificate and SubscribeURL live under it. */
  snsPrefix: string;
  topicArn: string;
  sent: SesSent[];
  posts: SnsPost[];
  confirmations: string[];
  /** Where notifications go (the gateway's provider endpoint). */
  notifyTo(url: string): void;
  /** Switches between event publishing (true) and identity notifications (false). */
  setEventPublishing(on: boolean): void;
  /** Sends a SubscriptionConfirmation; resolves with the endpoint's answer. */
  subscribe(): Promise<number>;
  /** Signs and posts any SNS message (fields as SNS sends them; Signature* added); resolves with the last answer. */
  post(fields: Record<string, string>, opts?: { signatureVersion?: '1' | '2'; corrupt?: boolean }): Promise<number>;
  /** Signs an SNS message without posting it. */
  sign(fields: Record<string, string>, signatureVersion?: '1' | '2'): Record<string, string>;
  waitForSent(n: number, timeoutMs?: number): Promise<SesSent[]>;
  close(): Promise<void>;
}

const SIGNED: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sesError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ __type: type, message }));
}

export async function startFakeSes(opts: FakeSesOptions = {}): Promise<FakeSes> {
  const behaviourOf = opts.behaviour ?? (() => 'deliver' as const);
  let eventPublishing = opts.eventPublishing ?? true;
  const topicArn = opts.topicArn ?? 'arn:aws:sns:us-east-1:123456789012:mailroom-ses';
  const pems = await generate([{ name: 'commonName', value: 'sns.amazonaws.com' }], { keySize: 2048, algorithm: 'sha256' });
  const sent: SesSent[] = [];
  const posts: SnsPost[] = [];
  const confirmations: string[] = [];
  const throttled = new Set<string>();
  const inFlight = new Set<Promise<unknown>>();
  let endpoint: string | undefined;
  let base = '';

  const sign = (fields: Record<string, string>, version: '1' | '2' = '2'): Record<string, string> => {
    const m: Record<string, string> = { ...fields, SignatureVersion: version, SigningCertURL: `${base}/sns/SimpleNotificationService-test.pem` };
    const signer = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
    for (const key of SIGNED[m.Type ?? ''] ?? []) if (m[key] !== undefined) signer.update(`${key}\n${m[key]}\n`);
    return { ...m, Signature: signer.sign(pems.private, 'base64') };
  };

  const deliver = async (message: Record<string, string>): Promise<number> => {
    if (!endpoint) throw new Error('fake SES: notifyTo() was not called');
    const post: SnsPost = { type: message.Type ?? '', body: JSON.stringify(message), statuses: [] };
    posts.push(post);
    for (let attempt = 0; attempt < 6; attempt++) {
      if (attempt) await new Promise((r) => setTimeout(r, 100 * attempt));
      const res = await fetch(endpoint, { method: 'POST', body: post.body, headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': post.type, 'x-amz-sns-topic-arn': topicArn } });
      await res.arrayBuffer();
      post.statuses.push(res.status);
      if (res.status < 500) break; // SNS redelivers on server errors
    }
    return post.statuses.at(-1)!;
  };

  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };

  const notify = (type: 'Delivery' | 'Bounce' | 'Complaint', s: SesSent, detail: Record<string, unknown>): Promise<number> => {
    const now = new Date().toISOString();
    const mail = {
      timestamp: now,
      source: 'sender@mailroom.test',
      messageId: s.messageId,
      destination: s.to,
      headersTruncated: false,
      ...(eventPublishing ? { tags: { 'ses:configuration-set': [s.configurationSet ?? ''], ...Object.fromEntries(Object.entries(s.tags).map(([k, v]) => [k, [v]])) } } : {}),
    };
    const key = type.toLowerCase();
    const event = { [eventPublishing ? 'eventType' : 'notificationType']: type, mail, [key]: { timestamp: now, ...detail } };
    return deliver(sign({ Type: 'Notification', MessageId: randomUUID(), TopicArn: topicArn, Message: JSON.stringify(event), Timestamp: now }));
  };

  const afterSend = async (s: SesSent): Promise<void> => {
    for (const r of s.to) {
      const b = behaviourOf(r);
      if (['deliver', 'complain', 'not-spam', 'throttle-once'].includes(b)) {
        await notify('Delivery', s, { recipients: [r], processingTimeMillis: 500, smtpResponse: '250 ok', reportingMTA: 'a8-1.smtp-out.amazonses.com' });
      } else if (b === 'bounce') {
        await notify('Bounce', s, { bounceType: 'Permanent', bounceSubType: 'General', feedbackId: randomUUID(), bouncedRecipients: [{ emailAddress: r, action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }] });
      } else if (b === 'soft-bounce') {
        await notify('Bounce', s, { bounceType: 'Transient', bounceSubType: 'MailboxFull', feedbackId: randomUUID(), bouncedRecipients: [{ emailAddress: r, action: 'failed', status: '4.2.2', diagnosticCode: 'smtp; 452 4.2.2 mailbox full' }] });
      } else if (b === 'suppressed') {
        await notify('Bounce', s, { bounceType: 'Permanent', bounceSubType: 'OnAccountSuppressionList', feedbackId: randomUUID(), bouncedRecipients: [{ emailAddress: r }] });
      }
    }
    for (const type of ['abuse', 'not-spam'] as const) {
      const complained = s.to.filter((r) => behaviourOf(r) === (type === 'abuse' ? 'complain' : 'not-spam'));
      if (complained.length) await notify('Complaint', s, { complainedRecipients: complained.map((r) => ({ emailAddress: r })), complaintFeedbackType: type, feedbackId: randomUUID(), userAgent: 'Mozilla/5.0' });
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', base);
      if (req.method === 'POST' && url.pathname === '/v2/email/outbound-emails') {
        const body = JSON.parse((await readBody(req)).toString('utf8')) as {
          Destination?: { ToAddresses?: string[] };
          Content?: { Raw?: { Data?: string } };
          EmailTags?: { Name: string; Value: string }[];
          ConfigurationSetName?: string;
        };
        const to = (body.Destination?.ToAddresses ?? []).map((a) => a.toLowerCase());
        const data = body.Content?.Raw?.Data;
        if (!data || !to.length) return sesError(res, 400, 'BadRequestException', 'Raw content and destinations are required');
        if (to.some((r) => behaviourOf(r) === 'reject-content')) return sesError(res, 400, 'MessageRejected', 'Email content rejected: policy');
        const throttling = to.find((r) => behaviourOf(r) === 'throttle-once' && !throttled.has(r));
        if (throttling) {
          throttled.add(throttling);
          return sesError(res, 429, 'TooManyRequestsException', 'Maximum sending rate exceeded.');
        }
        const s: SesSent = {
          messageId: `0100018${randomUUID().replace(/-/g, '')}-000000`,
          raw: Buffer.from(data, 'base64'),
          to,
          tags: Object.fromEntries((body.EmailTags ?? []).map((t) => [t.Name, t.Value])),
          configurationSet: body.ConfigurationSetName,
        };
        sent.push(s);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ MessageId: s.messageId }));
        void track(afterSend(s));
        return;
      }
      if (req.method === 'GET' && url.pathname === '/sns/SimpleNotificationService-test.pem') {
        res.writeHead(200, { 'content-type': 'application/x-pem-file' });
        res.end(pems.cert);
        return;
      }
      if (req.method === 'GET' && url.pathname === '/sns/confirm') {
        confirmations.push(url.searchParams.get('Token') ?? '');
        res.writeHead(200, { 'content-type': 'text/xml' });
        res.end('<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>arn</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>');
        return;
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    snsPrefix: `${base}/sns/`,
    topicArn,
    sent,
    posts,
    confirmations,
    notifyTo(url) {
      endpoint = url;
    },
    setEventPublishing(on) {
      eventPublishing = on;
    },
    subscribe() {
      const token = randomUUID();
      return track(
        deliver(
          sign({
            Type: 'SubscriptionConfirmation',
            MessageId: randomUUID(),
            Token: token,
            TopicArn: topicArn,
            Message: `You have chosen to subscribe to the topic ${topicArn}.`,
            SubscribeURL: `${base}/sns/confirm?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}`,
            Timestamp: new Date().toISOString(),
          }),
        ),
      );
    },
    post(fields, o = {}) {
      const signed = sign(fields, o.signatureVersion);
      if (o.corrupt) signed.Message = `${signed.Message} `;
      return track(deliver(signed));
    },
    sign,
    waitForSent(n, timeoutMs = 10_000) {
      return waitFor(() => sent.length >= n && sent.slice(0, n), { timeoutMs, what: `${n} message(s) sent through SES` });
    },
    async close() {
      await Promise.allSettled([...inFlight]);
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
