import nodemailer from 'nodemailer';
import { simpleParser, type Attachment, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startTestRelay, type RelayBehaviour, type TestRelay } from './test-relay';
import { waitFor } from './wait';

const RELAY = 'relay.provider.test';
const AUTHOR = 'Ada <ada@sender.mailroom.test>';
const BEHAVIOURS: Record<string, RelayBehaviour> = {
  'nobody@dest.test': 'reject',
  'busy@dest.test': 'tempfail',
  'gone@dest.test': 'bounce',
  'slow@dest.test': 'defer-then-bounce',
  'angry@dest.test': 'complain',
};

interface Captured {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
}

/** Our SMTP edge, as far as the relay can tell: takes every report and keeps it. */
async function startCapture(): Promise<{ port: number; mail: Captured[]; close(): Promise<void> }> {
  const mail: Captured[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    disableReverseLookup: true,
    closeTimeout: 1_000,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mail.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
        });
        callback(null, 'Ok: captured');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    mail,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The field blocks of a message/delivery-status or message/feedback-report body, names lower-cased. */
function fieldBlocks(content: Buffer): Map<string, string>[] {
  return content
    .toString('utf8')
    .trim()
    .split(/\r\n\r\n/)
    .map((block) => new Map(block.split('\r\n').map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()])));
}

function part(mail: ParsedMail, contentType: string): Attachment {
  const found = mail.attachments.find((a) => a.contentType === contentType);
  if (!found) throw new Error(`no ${contentType} part; parts: ${mail.attachments.map((a) => a.contentType).join(', ')}`);
  return found;
}

function hasBareLineEnding(raw: Buffer): boolean {
  return /\r(?!\n)|(?<!\r)\n/.test(raw.toString('latin1'));
}

describe('startTestRelay', () => {
  let capture: Awaited<ReturnType<typeof startCapture>>;
  let relay: TestRelay;
  let n = 0;

  beforeEach(async () => {
    capture = await startCapture();
    relay = await startTestRelay({ feedbackTo: { host: '127.0.0.1', port: capture.port }, hostname: RELAY, behaviour: (rcpt) => BEHAVIOURS[rcpt] ?? 'deliver' });
  });

  afterEach(async () => {
    await relay.close();
    await capture.close();
  });

  /** Sends one message through the relay the way our outbound service does: VERP sender, DSN parameters. */
  async function send(to: string | string[], dsn?: { id?: string; return?: 'headers' | 'full'; notify?: string[] }) {
    const id = ++n;
    const verp = `b+m${id}=dest.test@bounce.mailroom.test`;
    const messageId = `<msg-${id}@sender.mailroom.test>`;
    const text = `Hello, this is message ${id}.`;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: relay.port, secure: false, ignoreTLS: true, name: 'out.mailroom.test' });
    try {
      const info = await transport.sendMail({
        envelope: { from: verp, to },
        from: AUTHOR,
        to,
        subject: `Message ${id}`,
        text,
        messageId,
        ...(dsn ? { dsn: { ...dsn, recipient: Array.isArray(to) ? to[0] : to } } : {}),
      });
      return { info, verp, messageId, text };
    } finally {
      transport.close();
    }
  }

  async function reports(count: number): Promise<{ captured: Captured; parsed: ParsedMail }[]> {
    const captured = await waitFor(() => capture.mail.length >= count && capture.mail.slice(0, count), { timeoutMs: 10_000, what: `${count} report(s) at the edge` });
    return Promise.all(captured.map(async (c) => ({ captured: c, parsed: await simpleParser(c.raw, { keepDeliveryStatus: true }) })));
  }

  it('answers 250 with the queue id it keeps, and captures the envelope and its DSN parameters', async () => {
    const { info, verp } = await send('ada@dest.test', { id: 'env-1', return: 'headers', notify: ['success', 'failure', 'delay'] });
    const [message] = await relay.waitForMessages(1);
    const queued = /^250 2\.0\.0 Ok: queued as (\S+)$/.exec(info.response);
    expect(queued?.[1]).toBe(message?.queueId);
    expect(message).toMatchObject({
      mailFrom: verp,
      rcptTo: ['ada@dest.test'],
      dsn: { notify: ['SUCCESS', 'FAILURE', 'DELAY'], ret: 'HDRS', envid: 'env-1' },
      recipients: [{ address: 'ada@dest.test', behaviour: 'deliver', notify: ['SUCCESS', 'FAILURE', 'DELAY'], orcpt: 'rfc822;ada@dest.test' }],
    });
    expect(message?.queueId).toMatch(new RegExp(`^[0-9A-F]{12}@${RELAY.replace(/\./g, '\\.')}$`));
    expect(message?.raw.toString()).toContain('Message-ID: <msg-1@sender.mailroom.test>');
  });

  it('refuses a reject recipient at RCPT TO with 550 5.1.1 and a tempfail one with 451 4.3.0, and reports neither', async () => {
    await expect(send('nobody@dest.test')).rejects.toMatchObject({ responseCode: 550, response: expect.stringMatching(/^550 5\.1\.1 <nobody@dest\.test>: /) });
    await expect(send('busy@dest.test')).rejects.toMatchObject({ responseCode: 451, response: expect.stringMatching(/^451 4\.3\.0 /) });

    const { info } = await send(['nobody@dest.test', 'ada@dest.test'], { id: 'env-mixed', notify: ['success'] });
    expect(info.accepted).toEqual(['ada@dest.test']);
    expect(info.rejected).toEqual(['nobody@dest.test']);
    const [message] = await relay.waitForMessages(1);
    expect(message?.rcptTo).toEqual(['ada@dest.test']);
    const [delivered] = await reports(1);
    expect(fieldBlocks(part(delivered!.parsed, 'message/delivery-status').content).slice(1).map((b) => b.get('final-recipient'))).toEqual(['rfc822; ada@dest.test']);
    expect(relay.received).toHaveLength(1);
  });

  it('sends a delivered DSN on NOTIFY=SUCCESS, from MAILER-DAEMON with the null sender to the VERP address', async () => {
    const { verp, messageId } = await send('ada@dest.test', { id: 'env-ok', return: 'full', notify: ['success'] });
    const { captured, parsed } = (await reports(1))[0]!;

    expect(captured.mailFrom).toBe('');
    expect(captured.rcptTo).toEqual([verp]);
    expect(hasBareLineEnding(captured.raw)).toBe(false);
    expect(captured.raw.equals(relay.reportsSent[0]!.raw)).toBe(true);
    expect(relay.reportsSent[0]).toMatchObject({ type: 'dsn', action: 'delivered', to: verp, queueId: relay.received[0]!.queueId });

    expect(parsed.from?.value[0]?.address).toBe(`MAILER-DAEMON@${RELAY}`);
    expect(parsed.to && !Array.isArray(parsed.to) && parsed.to.value[0]?.address).toBe(verp);
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/report', params: { 'report-type': 'delivery-status' } });
    expect(parsed.headers.get('auto-submitted')).toBe('auto-replied');
    expect(parsed.text).toContain('successfully delivered');

    const [perMessage, perRecipient] = fieldBlocks(part(parsed, 'message/delivery-status').content);
    expect(Object.fromEntries(perMessage!)).toMatchObject({ 'original-envelope-id': 'env-ok', 'reporting-mta': `dns; ${RELAY}`, 'arrival-date': expect.any(String) });
    expect(Object.fromEntries(perRecipient!)).toMatchObject({
      'original-recipient': 'rfc822;ada@dest.test',
      'final-recipient': 'rfc822; ada@dest.test',
      action: 'delivered',
      status: '2.0.0',
      'diagnostic-code': expect.stringMatching(/^smtp; 250 /),
      'last-attempt-date': expect.any(String),
    });
    // RET=FULL applies to failures only: a success returns the headers.
    expect(part(parsed, 'text/rfc822-headers').content.toString()).toContain(`Message-ID: ${messageId}`);
  });

  it('sends a failed DSN (5.1.1) for a bounce, with the whole message when RET=FULL', async () => {
    const { verp, messageId, text } = await send('gone@dest.test', { id: 'env-gone', return: 'full', notify: ['failure'] });
    const { captured, parsed } = (await reports(1))[0]!;
    expect(captured).toMatchObject({ mailFrom: '', rcptTo: [verp] });
    expect(parsed.subject).toBe('Undelivered Mail Returned to Sender');

    const [perMessage, perRecipient] = fieldBlocks(part(parsed, 'message/delivery-status').content);
    expect(perMessage?.get('original-envelope-id')).toBe('env-gone');
    expect(Object.fromEntries(perRecipient!)).toMatchObject({
      'final-recipient': 'rfc822; gone@dest.test',
      action: 'failed',
      status: '5.1.1',
      'remote-mta': 'dns; mx.dest.test',
      'diagnostic-code': 'smtp; 550 5.1.1 <gone@dest.test>: Recipient address rejected: User unknown',
    });
    const returned = await simpleParser(part(parsed, 'message/rfc822').content);
    expect(returned.messageId).toBe(messageId);
    expect(returned.text?.trim()).toBe(text);
  });

  it('bounces without NOTIFY too (failures are the default), returning the full message', async () => {
    await send('gone@dest.test');
    const { parsed } = (await reports(1))[0]!;
    const [perMessage] = fieldBlocks(part(parsed, 'message/delivery-status').content);
    expect(perMessage?.has('original-envelope-id')).toBe(false);
    expect(part(parsed, 'message/rfc822')).toBeDefined();
  });

  it('sends a delayed DSN (4.4.1) and then a failed one (4.4.7) for defer-then-bounce, with the headers when RET=HDRS', async () => {
    const { verp, messageId } = await send('slow@dest.test', { id: 'env-slow', return: 'headers', notify: ['failure', 'delay'] });
    const [delayed, failed] = await reports(2);
    for (const r of [delayed!, failed!]) {
      expect(r.captured).toMatchObject({ mailFrom: '', rcptTo: [verp] });
      expect(hasBareLineEnding(r.captured.raw)).toBe(false);
      expect(fieldBlocks(part(r.parsed, 'message/delivery-status').content)[0]?.get('original-envelope-id')).toBe('env-slow');
      expect(part(r.parsed, 'text/rfc822-headers').content.toString()).toContain(`Message-ID: ${messageId}`);
      expect(r.parsed.attachments.some((a) => a.contentType === 'message/rfc822')).toBe(false);
    }
    expect(Object.fromEntries(fieldBlocks(part(delayed!.parsed, 'message/delivery-status').content)[1]!)).toMatchObject({
      action: 'delayed',
      status: '4.4.1',
      'diagnostic-code': expect.stringMatching(/^X-Relay; connect to mx\.dest\.test/),
      'will-retry-until': expect.any(String),
    });
    expect(Date.parse(fieldBlocks(part(delayed!.parsed, 'message/delivery-status').content)[1]!.get('will-retry-until')!)).toBeGreaterThan(Date.now());
    expect(Object.fromEntries(fieldBlocks(part(failed!.parsed, 'message/delivery-status').content)[1]!)).toMatchObject({ action: 'failed', status: '4.4.7' });
    expect(relay.reportsSent.map((r) => r.action)).toEqual(['delayed', 'failed']);
  });

  it('sends an ARF abuse report for a complaint, with the original message', async () => {
    const { verp, messageId } = await send('angry@dest.test', { id: 'env-angry', notify: ['failure'] });
    const { captured, parsed } = (await reports(1))[0]!;
    expect(captured).toMatchObject({ mailFrom: '', rcptTo: [verp] });
    expect(hasBareLineEnding(captured.raw)).toBe(false);
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/report', params: { 'report-type': 'feedback-report' } });
    expect(parsed.text).toContain('abuse report');

    const [fields] = fieldBlocks(part(parsed, 'message/feedback-report').content);
    expect(Object.fromEntries(fields!)).toMatchObject({
      'feedback-type': 'abuse',
      'user-agent': expect.any(String),
      version: '1',
      'original-envelope-id': 'env-angry',
      'original-mail-from': `<${verp}>`,
      'original-rcpt-to': '<angry@dest.test>',
      'arrival-date': expect.any(String),
      'reported-domain': 'sender.mailroom.test',
    });
    const returned = await simpleParser(part(parsed, 'message/rfc822').content);
    expect(returned.messageId).toBe(messageId);
    expect(relay.reportsSent).toMatchObject([{ type: 'arf', to: verp }]);
  });

  it('reports nothing for NOTIFY=NEVER or a success nobody asked for', async () => {
    await send('gone@dest.test', { notify: ['never'] });
    await send('ada@dest.test');
    await send('ada@dest.test', { id: 'env-last', notify: ['success'] });
    const [last] = await reports(1);
    expect(fieldBlocks(part(last!.parsed, 'message/delivery-status').content)[0]?.get('original-envelope-id')).toBe('env-last');
    expect(relay.received).toHaveLength(3);
    expect(relay.reportsSent).toHaveLength(1);
  });

  it('records a report the edge cannot take, and keeps relaying', async () => {
    await capture.close();
    await send('gone@dest.test', { id: 'env-lost' });
    await relay.waitForReports(1);
    expect(relay.reportsSent).toHaveLength(0);
    expect(relay.reportErrors).toHaveLength(1);
    expect(relay.reportErrors[0]).toBeInstanceOf(Error);

    const { info } = await send('ada@dest.test');
    expect(info.response).toMatch(/^250 /);
    expect(relay.received).toHaveLength(2);
  });
});
