import { EVENT_TYPES, eventEnvelope } from './events';
import { newId } from './ids';

const ts = '2026-11-22T08:00:00.000Z';
const base = { id: newId('event'), timestamp: ts, org_id: newId('organization'), env_id: newId('environment') };

describe('event envelope', () => {
  it('catalogs exactly the seven event types of the spec', () => {
    expect(EVENT_TYPES).toEqual([
      'message.received',
      'message.sent',
      'message.delivered',
      'message.bounced',
      'message.complained',
      'message.rejected',
      'domain.verified',
    ]);
  });

  it('accepts message.received with the spec fields', () => {
    const data = {
      message_id: newId('message'),
      thread_id: newId('thread'),
      inbox_id: newId('inbox'),
      from_address: 'a@example.com',
      to_addresses: ['b@example.com'],
      subject: 'hi',
      extracted_text: 'hello',
      has_attachments: false,
      received_at: ts,
    };
    expect(eventEnvelope.safeParse({ ...base, type: 'message.received', data }).success).toBe(true);
    expect(eventEnvelope.safeParse({ ...base, type: 'message.received', data: { ...data, extra: 1 } }).success).toBe(false);
    const { has_attachments: _omit, ...missing } = data;
    expect(eventEnvelope.safeParse({ ...base, type: 'message.received', data: missing }).success).toBe(false);
  });

  it('has no thread_id in message.complained and no message_id in message.rejected', () => {
    const complained = { message_id: newId('message'), inbox_id: newId('inbox'), complained_recipients: ['x@y.z'], feedback_type: 'abuse', complained_at: ts };
    expect(eventEnvelope.safeParse({ ...base, type: 'message.complained', data: complained }).success).toBe(true);
    expect(eventEnvelope.safeParse({ ...base, type: 'message.complained', data: { ...complained, thread_id: newId('thread') } }).success).toBe(false);
    const rejected = {
      inbox_id: newId('inbox'),
      from_address: 'a@b.c',
      to_addresses: ['x@y.z'],
      subject: 's',
      rejection_reason: 'blocked_recipient',
      rejection_detail: 'on the suppression list',
      rejected_at: ts,
    };
    expect(eventEnvelope.safeParse({ ...base, type: 'message.rejected', data: rejected }).success).toBe(true);
    expect(eventEnvelope.safeParse({ ...base, type: 'message.rejected', data: { ...rejected, message_id: newId('message') } }).success).toBe(false);
    expect(eventEnvelope.safeParse({ ...base, type: 'message.rejected', data: { ...rejected, rejection_reason: 'spam' } }).success).toBe(false);
  });

  it('restricts bounce types and wants timestamps with milliseconds in UTC', () => {
    const bounced = {
      message_id: newId('message'),
      thread_id: newId('thread'),
      inbox_id: newId('inbox'),
      bounce_type: 'Permanent',
      bounce_sub_type: 'NoEmail',
      bounced_recipients: [{ email_address: 'x@y.z', status: '5.1.1', diagnostic_code: 'smtp; 550 5.1.1 no such user' }],
      bounced_at: ts,
    };
    expect(eventEnvelope.safeParse({ ...base, type: 'message.bounced', data: bounced }).success).toBe(true);
    expect(eventEnvelope.safeParse({ ...base, type: 'message.bounced', data: { ...bounced, bounce_type: 'Hard' } }).success).toBe(false);
    expect(eventEnvelope.safeParse({ ...base, type: 'message.bounced', data: { ...bounced, bounced_at: '2026-11-22T08:00:00Z' } }).success).toBe(false);
    expect(eventEnvelope.safeParse({ ...base, timestamp: '2026-11-22T09:00:00.000+01:00', type: 'message.bounced', data: bounced }).success).toBe(false);
  });

  it('requires verification_status verified in domain.verified', () => {
    const data = { domain_id: newId('domain'), domain_name: 'example.com', verification_status: 'verified', spf_status: 'pass', dkim_status: 'pass', dmarc_status: 'pass', verified_at: ts };
    expect(eventEnvelope.safeParse({ ...base, type: 'domain.verified', data }).success).toBe(true);
    expect(eventEnvelope.safeParse({ ...base, type: 'domain.verified', data: { ...data, verification_status: 'pending' } }).success).toBe(false);
  });
});
