import { readFileSync } from 'node:fs';
import { corpusPath } from '@mailroom/testing';
import { parseFeedback } from './index';

/** A message from header and body lines, CRLF-terminated as on the wire. */
const mail = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

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
