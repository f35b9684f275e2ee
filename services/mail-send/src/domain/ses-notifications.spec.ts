/**
 * SES notification contents, shaped as AWS documents them ("Examples of event data that
 * Amazon SES publishes to Amazon SNS" and "Amazon SNS notification examples for Amazon
 * SES"), trimmed of the headers we do not read.
 */
import { sesEvent, subTypeOf, translate as translateParsed } from './ses-notifications';

const translate = (event: unknown, recipients: string[]) => translateParsed(sesEvent.parse(event), recipients);

const mail = {
  timestamp: '2017-08-05T00:40:02.012Z',
  source: 'Sender Name <sender@example.com>',
  sendingAccountId: '123456789012',
  messageId: 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
  destination: ['recipient@example.com'],
  headersTruncated: false,
  tags: { 'ses:configuration-set': ['ConfigSet'], mailroom_message_id: ['msg_01JB0000000000000000000000'] },
};

describe('SES events as feedback', () => {
  it('a permanent bounce: each recipient with its status and diagnostic, suppressing', () => {
    const t = translate(
      {
        eventType: 'Bounce',
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          bouncedRecipients: [{ emailAddress: 'Recipient@Example.com', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
          timestamp: '2017-08-05T00:41:02.669Z',
        },
        mail,
      },
      ['recipient@example.com'],
    );
    expect(t).toEqual({
      feedback: expect.objectContaining({
        kind: 'dsn',
        recipients: [{ address: 'recipient@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown', bounceType: 'Permanent', bounceSubType: 'General' }],
      }),
      at: new Date('2017-08-05T00:41:02.669Z'),
      suppress: true,
    });
  });

  it('a transient or undetermined bounce is Transient; sub-types map to the spec’s three', () => {
    const soft = translate({ notificationType: 'Bounce', bounce: { bounceType: 'Undetermined', bounceSubType: 'Undetermined', bouncedRecipients: [{ emailAddress: 'a@example.com' }] }, mail }, []);
    expect(soft?.feedback).toMatchObject({ recipients: [{ bounceType: 'Transient', bounceSubType: 'General', status: '4.0.0', diagnosticCode: 'ses; Undetermined/Undetermined' }] });
    expect(['NoEmail', 'Suppressed', 'OnAccountSuppressionList', 'MailboxFull', 'MessageTooLarge', 'ContentRejected', 'AttachmentRejected', undefined].map(subTypeOf)).toEqual([
      'NoEmail',
      'Suppressed',
      'Suppressed',
      'General',
      'General',
      'General',
      'General',
      'General',
    ]);
  });

  it('a complaint, with its feedback type (abuse when SES has none)', () => {
    const t = translate({ eventType: 'Complaint', complaint: { complainedRecipients: [{ emailAddress: 'recipient@example.com' }], complaintFeedbackType: 'abuse', timestamp: '2017-08-05T00:41:02.669Z' }, mail }, []);
    expect(t?.feedback).toMatchObject({ kind: 'complaint', feedbackType: 'abuse', recipients: ['recipient@example.com'] });
    const bare = translate({ notificationType: 'Complaint', complaint: { complainedRecipients: [{ emailAddress: 'x@example.com' }] }, mail }, []);
    expect(bare?.feedback).toMatchObject({ feedbackType: 'abuse' });
  });

  it('a delivery, at the time SES gives', () => {
    const t = translate({ eventType: 'Delivery', delivery: { recipients: ['recipient@example.com'], timestamp: '2016-10-19T23:21:04.133Z' }, mail }, []);
    expect(t).toEqual({ feedback: expect.objectContaining({ recipients: [expect.objectContaining({ address: 'recipient@example.com', action: 'delivered' })] }), at: new Date('2016-10-19T23:21:04.133Z'), suppress: true });
  });

  it('a reject fails every recipient without suppressing anyone', () => {
    const t = translate({ eventType: 'Reject', reject: { reason: 'Bad content' }, mail }, ['a@example.com', 'b@example.com']);
    expect(t?.suppress).toBe(false);
    expect(t?.feedback).toMatchObject({ recipients: [{ address: 'a@example.com', diagnosticCode: 'ses; Reject: Bad content', bounceType: 'Permanent' }, { address: 'b@example.com' }] });
  });

  it('an event without its details is nothing', () => {
    expect(translate({ eventType: 'Bounce', mail }, [])).toBeNull();
    expect(translate({ eventType: 'Open', mail }, [])).toBeNull();
  });
});
