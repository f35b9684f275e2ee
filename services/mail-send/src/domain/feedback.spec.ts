import { readFileSync } from 'node:fs';
import { corpusPath } from '@mailroom/testing';
import { MAX_REPORT_BYTES, parseFeedback, type DsnFeedback } from './feedback';

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

describe('parseFeedback: RFC 5965 complaints', () => {
  it('reads an ARF abuse report', async () => {
    const raw = mail(
      'From: <feedback@isp.example>',
      'To: <fbl@mailroom.example>',
      'Subject: Abuse report',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=feedback-report; boundary="arf"',
      '',
      '--arf',
      'Content-Type: text/plain',
      '',
      'This is an email abuse report.',
      '--arf',
      'Content-Type: message/feedback-report',
      '',
      'Feedback-Type: abuse',
      'User-Agent: SomeGenerator/1.0',
      'Version: 1',
      'Original-Mail-From: <bounces+Zq7@bounce.mailroom.example>',
      'Original-Rcpt-To: <Dave@Example.org>',
      'Original-Envelope-Id: msg_42',
      '',
      '--arf',
      'Content-Type: message/rfc822',
      'Content-Disposition: inline',
      '',
      'From: agent@customer.example',
      'To: dave@example.org',
      'Message-ID: <m42@mailroom.example>',
      'Subject: Offer',
      '',
      'Body',
      '--arf--',
    );
    expect(await parseFeedback(raw)).toEqual({
      kind: 'complaint',
      feedbackType: 'abuse',
      recipients: ['dave@example.org'],
      originalMessageId: 'm42@mailroom.example',
      envelopeId: 'msg_42',
      originalMailFrom: 'bounces+zq7@bounce.mailroom.example',
      verpToken: 'Zq7',
    });
  });

  // The original's To and Cc list everyone the message was addressed to, not who complained
  // (and FBLs redact them): a report that names nobody names nobody.
  it('names no recipient when the report names none, whatever the attached message is addressed to', async () => {
    const raw = mail(
      'From: fbl@isp.example',
      'Content-Type: multipart/report; report-type=feedback-report; boundary=a',
      '',
      '--a',
      'Content-Type: message/feedback-report',
      '',
      'Feedback-Type: fraud',
      '--a',
      'Content-Type: message/rfc822',
      '',
      'Return-Path: <bounces+tok1@bounce.mailroom.example>',
      'To: erin@example.org, frank@example.org',
      'Cc: grace@example.org',
      '',
      'x',
      '--a--',
    );
    expect(await parseFeedback(raw)).toMatchObject({ kind: 'complaint', feedbackType: 'fraud', recipients: [], verpToken: 'tok1' });
    // sisimai arf-01: no Original-Rcpt-To; the reported message's To is "redacted@example.net".
    expect(await parseFeedback(readFileSync(corpusPath('sisimai', 'bsd', 'arf-01.eml')))).toMatchObject({ kind: 'complaint', feedbackType: 'abuse', recipients: [] });
  });

  it('reads what a report is, without deciding what it means: not-spam, opt-out (Removal-Recipient), Apple Mail unsubscribe', async () => {
    const notSpam = mail(
      'From: fbl@isp.example',
      'Content-Type: multipart/report; report-type=feedback-report; boundary=a',
      '',
      '--a',
      'Content-Type: message/feedback-report',
      '',
      'Feedback-Type: not-spam',
      'Original-Rcpt-To: <ivan@example.org>',
      '--a--',
    );
    expect(await parseFeedback(notSpam)).toMatchObject({ kind: 'complaint', feedbackType: 'not-spam', recipients: ['ivan@example.org'] });
    expect(await parseFeedback(readFileSync(corpusPath('sisimai', 'bsd', 'arf-12.eml')))).toMatchObject({ kind: 'complaint', feedbackType: 'opt-out', recipients: ['user@example.com'] });
    expect(await parseFeedback(readFileSync(corpusPath('sisimai', 'bsd', 'arf-26.eml')))).toMatchObject({ kind: 'complaint', feedbackType: 'opt-out', recipients: ['example@icloud.com'] });
  });
});

describe('parseFeedback: plain-text bounces', () => {
  it('reads a qmail notice', async () => {
    const raw = mail(
      'From: MAILER-DAEMON@mx.example.net',
      'To: bounces+q1@bounce.mailroom.example',
      'Subject: failure notice',
      '',
      'Hi. This is the qmail-send program at mx.example.net.',
      "I'm afraid I wasn't able to deliver your message to the following addresses.",
      "This is a permanent error; I've given up. Sorry it didn't work out.",
      '',
      '<frank@example.org>:',
      '192.0.2.9 does not like recipient.',
      'Remote host said: 550 5.1.1 <frank@example.org>... User Unknown',
      'Giving up on 192.0.2.9.',
      '',
      '--- Below this line is a copy of the message.',
      '',
      'Return-Path: <bounces+q1@bounce.mailroom.example>',
      'Message-ID: <q1@mailroom.example>',
      'To: frank@example.org',
      '',
    );
    const f = asDsn(await parseFeedback(raw));
    expect(f.recipients).toEqual([expect.objectContaining({ address: 'frank@example.org', status: '5.1.1', bounceType: 'Permanent', bounceSubType: 'NoEmail' })]);
    expect(f).toMatchObject({ originalMessageId: 'q1@mailroom.example', verpToken: 'q1' });
  });

  it('reads an Exim notice through X-Failed-Recipients, and a delay warning as Transient', async () => {
    const exim = mail(
      'From: Mail Delivery System <Mailer-Daemon@mx.example.net>',
      'To: agent@customer.example',
      'X-Failed-Recipients: grace@example.org',
      'Subject: Mail delivery failed: returning message to sender',
      '',
      'A message that you sent could not be delivered to one or more of its',
      'recipients. This is a permanent error. The following address(es) failed:',
      '',
      '  grace@example.org',
      '    host mx.example.org [192.0.2.1]',
      '    SMTP error from remote mail server after RCPT TO:<grace@example.org>:',
      '    552 5.2.2 Mailbox full',
      '',
    );
    expect(asDsn(await parseFeedback(exim)).recipients).toEqual([expect.objectContaining({ address: 'grace@example.org', status: '5.2.2', bounceType: 'Permanent', bounceSubType: 'General' })]);
    const delay = mail(
      'From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>',
      'To: agent@customer.example',
      'Subject: Delivery Status Notification (Delay)',
      '',
      'THIS IS A WARNING MESSAGE ONLY.',
      'Delivery to the following recipient has been delayed:',
      '',
      '     heidi@example.org',
      '',
      'Message will be retried for 2 more day(s)',
    );
    expect(asDsn(await parseFeedback(delay)).recipients).toEqual([expect.objectContaining({ address: 'heidi@example.org', action: 'delayed', bounceType: 'Transient' })]);
  });
});

describe('parseFeedback: not a report', () => {
  it('returns other for ordinary mail and for an auto-reply', async () => {
    const ordinary = mail('From: ivan@example.org', 'To: agent@customer.example', 'Subject: Re: Hello', 'Message-ID: <x@example.org>', '', 'Thanks, got it. The delivery was fine.');
    expect(await parseFeedback(ordinary)).toEqual({ kind: 'other' });
    const vacation = mail('Return-Path: <>', 'From: judy@example.org', 'To: agent@customer.example', 'Auto-Submitted: auto-replied', 'Subject: Out of office', '', 'I am away until Monday.');
    expect(await parseFeedback(vacation)).toEqual({ kind: 'other' });
  });

  it('returns other for empty, binary and oversized input', async () => {
    expect(await parseFeedback(Buffer.alloc(0))).toEqual({ kind: 'other' });
    expect(await parseFeedback(Buffer.from([0, 255, 1, 2, 3, 0, 13, 10]))).toEqual({ kind: 'other' });
    const big = Buffer.concat([dsn('5.1.1', { action: 'failed' }), Buffer.alloc(MAX_REPORT_BYTES, 0x61)]);
    expect(await parseFeedback(big)).toEqual({ kind: 'other' });
  });

  it('stays bounded on hostile input just under the size limit', async () => {
    const head = 'From: MAILER-DAEMON@x.example\r\nSubject: Undelivered Mail\r\nContent-Type: text/html\r\n\r\n';
    for (const body of ['<'.repeat(4_000_000), 'a@'.repeat(2_000_000), `${'|'.repeat(1999)}\n`.repeat(2000), 'Final-Recipient: rfc822; a@b.example\nAction: failed\n'.repeat(60_000)]) {
      const f = await parseFeedback(Buffer.from(head + body));
      expect(['dsn', 'other']).toContain(f.kind);
      if (f.kind === 'dsn') expect(f.recipients.length).toBeLessThanOrEqual(500);
    }
  });
});
