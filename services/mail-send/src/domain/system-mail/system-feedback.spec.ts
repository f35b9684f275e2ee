/** What a report means for a mail from the platform itself, to one address. */
import type { ComplaintFeedback, DsnFeedback, DsnRecipient } from '../feedback';
import { systemMailVerdict } from './system-feedback';

const TO = 'Ada@Example.com';
const rcpt = (address: string, action: DsnRecipient['action'], bounceType: DsnRecipient['bounceType'] = action === 'failed' ? 'Permanent' : null): DsnRecipient => ({
  address,
  action,
  status: action === 'failed' ? '5.1.1' : '2.0.0',
  diagnosticCode: '',
  bounceType,
  bounceSubType: null,
});
const dsn = (...recipients: DsnRecipient[]): DsnFeedback => ({ kind: 'dsn', recipients, envelopeId: null, originalMessageId: null, reportingMta: null, verpToken: null });
const arf = (feedbackType: string, recipients: string[] = []): ComplaintFeedback => ({ kind: 'complaint', feedbackType, recipients, originalMessageId: null, envelopeId: null, originalMailFrom: null, verpToken: null });

describe('systemMailVerdict', () => {
  it('takes a permanent failure of the address (any case) for a hard bounce that suppresses it', () => {
    expect(systemMailVerdict(dsn(rcpt('ada@example.com', 'failed')), TO)).toEqual({ status: 'bounced', suppress: 'hard_bounce' });
    expect(systemMailVerdict(dsn(rcpt('ada@example.com', 'failed', null)), TO)).toEqual({ status: 'bounced', suppress: 'hard_bounce' });
  });

  it('marks but does not suppress a failure that says nothing about the address', () => {
    expect(systemMailVerdict(dsn(rcpt('ada@example.com', 'failed')), TO, false)).toEqual({ status: 'bounced', suppress: null });
  });

  it('changes nothing on a soft bounce, a delay or a delivery', () => {
    for (const r of [rcpt('ada@example.com', 'failed', 'Transient'), rcpt('ada@example.com', 'delayed'), rcpt('ada@example.com', 'delivered')]) {
      expect(systemMailVerdict(dsn(r), TO)).toEqual({ status: null, suppress: null });
    }
  });

  it('takes a complaint naming the address, or naming nobody, for a complaint that suppresses it', () => {
    expect(systemMailVerdict(arf('abuse', ['ada@example.com']), TO)).toEqual({ status: 'complained', suppress: 'complaint' });
    expect(systemMailVerdict(arf('abuse'), TO)).toEqual({ status: 'complained', suppress: 'complaint' });
  });

  it('takes a report naming another address (a forwarding target, a redacted one) for one about the only recipient, as for customer mail', () => {
    expect(systemMailVerdict(dsn(rcpt('ada@forwarded.example', 'failed')), TO)).toEqual({ status: 'bounced', suppress: 'hard_bounce' });
    expect(systemMailVerdict(arf('abuse', ['redacted@example.net']), TO)).toEqual({ status: 'complained', suppress: 'complaint' });
  });

  it('suppresses on an unsubscribe without calling it a complaint; not-spam and unknown types change nothing', () => {
    expect(systemMailVerdict(arf('opt-out', ['ada@example.com']), TO)).toEqual({ status: null, suppress: 'unsubscribe' });
    expect(systemMailVerdict(arf('not-spam', ['ada@example.com']), TO)).toEqual({ status: null, suppress: null });
    expect(systemMailVerdict(arf('auth-failure'), TO)).toEqual({ status: null, suppress: null });
  });
});
