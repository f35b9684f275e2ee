import { parseFeedback, type DsnFeedback } from './index';

/** A message from header and body lines, CRLF-terminated as on the wire. */
const mail = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

function asDsn(f: Awaited<ReturnType<typeof parseFeedback>>): DsnFeedback {
  if (f.kind !== 'dsn') throw new Error(`expected a dsn, got ${f.kind}`);
  return f;
}

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
