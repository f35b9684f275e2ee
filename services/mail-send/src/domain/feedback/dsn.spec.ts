import { parseFeedback, type DsnFeedback } from './index';

/** A message from header and body lines, CRLF-terminated as on the wire. */
const mail = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

function dsn(status: string, opts: { action: string; diagnostic?: string; extraFields?: string[]; recipient?: string }): Buffer {
  return mail(
    'From: Mail Delivery System <MAILER-DAEMON@mx.example.net>',
    'To: bounces+Tk3Qm9x_2@bounce.mailroom.example',
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host mx.example.net.',
    '',
    '--b1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.net',
    'Original-Envelope-Id: msg_01HZY3',
    '',
    `Final-Recipient: rfc822; ${opts.recipient ?? 'Alice@Example.org'}`,
    `Action: ${opts.action}`,
    `Status: ${status}`,
    ...(opts.diagnostic ? [`Diagnostic-Code: smtp; ${opts.diagnostic}`] : []),
    ...(opts.extraFields ?? []),
    '',
    '--b1',
    'Content-Type: text/rfc822-headers',
    '',
    'Return-Path: <bounces+Tk3Qm9x_2@bounce.mailroom.example>',
    'Message-ID: <0195f2c4.abc@mailroom.example>',
    'From: agent@customer.example',
    'To: alice@example.org',
    'Subject: Hello',
    '',
    '--b1--',
    '',
  );
}

function asDsn(f: Awaited<ReturnType<typeof parseFeedback>>): DsnFeedback {
  if (f.kind !== 'dsn') throw new Error(`expected a dsn, got ${f.kind}`);
  return f;
}

describe('parseFeedback: RFC 3464 delivery status notifications', () => {
  it('reads a failed recipient: Permanent, NoEmail for 5.1.1, and identifies our message', async () => {
    const f = asDsn(await parseFeedback(dsn('5.1.1', { action: 'failed', diagnostic: '550 5.1.1 <alice@example.org>: Recipient address rejected: User unknown' })));
    expect(f).toEqual({
      kind: 'dsn',
      recipients: [
        {
          address: 'alice@example.org',
          action: 'failed',
          status: '5.1.1',
          diagnosticCode: '550 5.1.1 <alice@example.org>: Recipient address rejected: User unknown',
          bounceType: 'Permanent',
          bounceSubType: 'NoEmail',
        },
      ],
      envelopeId: 'msg_01HZY3',
      originalMessageId: '0195f2c4.abc@mailroom.example',
      reportingMta: 'mx.example.net',
      verpToken: 'Tk3Qm9x_2',
    });
  });

  it('reads a delay: Transient, General', async () => {
    const f = asDsn(await parseFeedback(dsn('4.4.1', { action: 'delayed', diagnostic: 'connect to mx.example.org[192.0.2.1]:25: Connection timed out', extraFields: ['Will-Retry-Until: Fri, 1 May 2026 10:00:00 +0000'] })));
    expect(f.recipients).toEqual([expect.objectContaining({ action: 'delayed', status: '4.4.1', bounceType: 'Transient', bounceSubType: 'General' })]);
  });

  it('reads a delivery: no bounce type', async () => {
    const f = asDsn(await parseFeedback(dsn('2.0.0', { action: 'delivered', diagnostic: '250 2.0.0 Ok: queued as 4B2C' })));
    expect(f.recipients).toEqual([expect.objectContaining({ action: 'delivered', status: '2.0.0', bounceType: null, bounceSubType: null })]);
  });

  it('takes the specific code from the diagnostic when Status is x.0.0, and the class from Status', async () => {
    const generic = asDsn(await parseFeedback(dsn('5.0.0', { action: 'failed', diagnostic: '550 5.1.1 No such user' })));
    expect(generic.recipients[0]).toMatchObject({ status: '5.1.1', bounceSubType: 'NoEmail' });
    const soft = asDsn(await parseFeedback(dsn('4.5.0', { action: 'failed', diagnostic: '550 5.5.0 Service refused, try later' })));
    expect(soft.recipients[0]).toMatchObject({ status: '4.5.0', bounceType: 'Transient' });
  });

  it('calls a refusal by suppression list Suppressed, and a policy block General', async () => {
    const suppressed = asDsn(await parseFeedback(dsn('5.1.1', { action: 'failed', diagnostic: 'Amazon SES did not send the message to this address because it is on the suppression list for your account.' })));
    expect(suppressed.recipients[0]).toMatchObject({ bounceType: 'Permanent', bounceSubType: 'Suppressed' });
    const policy = asDsn(await parseFeedback(dsn('5.7.1', { action: 'failed', diagnostic: '550 5.7.1 Message rejected as spam' })));
    expect(policy.recipients[0]).toMatchObject({ bounceType: 'Permanent', bounceSubType: 'General' });
  });

  it('prefers Original-Recipient, and splits recipient groups without blank lines', async () => {
    const raw = mail(
      'From: MAILER-DAEMON@mx.example.net',
      'Content-Type: multipart/report; report-type=delivery-status; boundary=x',
      '',
      '--x',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.net',
      '',
      'Final-Recipient: rfc822; bob@forwarded.example',
      'Original-Recipient: rfc822;bob@example.org',
      'Action: failed',
      'Status: 5.2.2',
      'Final-Recipient: rfc822; carol@example.org',
      'Action: delayed',
      'Status: 4.2.2',
      '--x--',
    );
    const f = asDsn(await parseFeedback(raw));
    expect(f.recipients.map((r) => [r.address, r.bounceType])).toEqual([
      ['bob@example.org', 'Permanent'],
      ['carol@example.org', 'Transient'],
    ]);
  });
});
