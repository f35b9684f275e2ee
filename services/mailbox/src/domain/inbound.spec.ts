import type { EnvelopeOf } from '@mailroom/contracts';
import { fitted } from './inbound';

function received(text: string, subject = 'Hello', to = ['agent@agents.test']): EnvelopeOf<'message.received'> {
  return {
    id: 'evt_01kaxq7h2m8d3g5v6w7x8y9z0a',
    type: 'message.received',
    timestamp: '2026-11-23T10:00:00.000Z',
    org_id: 'org_01kaxq7h2m8d3g5v6w7x8y9z0a',
    env_id: 'env_01kaxq7h2m8d3g5v6w7x8y9z0a',
    data: {
      message_id: 'msg_01kaxq7h2m8d3g5v6w7x8y9z0a',
      thread_id: 'thr_01kaxq7h2m8d3g5v6w7x8y9z0a',
      inbox_id: 'inb_01kaxq7h2m8d3g5v6w7x8y9z0a',
      from_address: 'ada@sender.test',
      to_addresses: to,
      subject,
      extracted_text: text,
      has_attachments: false,
      received_at: '2026-11-23T10:00:00.000Z',
    },
  };
}
const size = (e: unknown) => Buffer.byteLength(JSON.stringify(e));

describe('message.received as the bus can carry it', () => {
  it('leaves an event that fits as it is', () => {
    const e = received('short');
    expect(fitted(e, 10_000)).toBe(e);
  });

  it('cuts the text to the longest prefix that fits, whole characters, JSON escapes counted', () => {
    const text = 'é"\n'.repeat(50_000);
    const e = fitted(received(text), 20_000);
    expect(size(e)).toBeLessThanOrEqual(20_000);
    expect(size({ ...e, data: { ...e.data, extracted_text: Array.from(text).slice(0, Array.from(e.data.extracted_text).length + 1).join('') } })).toBeGreaterThan(20_000);
    expect(text.startsWith(e.data.extracted_text)).toBe(true);
    expect(e.data.subject).toBe('Hello');
  });

  it('cuts text far longer than fits, searching only what could fit, whole code points', () => {
    const text = 'a😀'.repeat(2_000_000);
    const e = fitted(received(text), 30_002);
    expect(size(e)).toBeLessThanOrEqual(30_002);
    expect(e.data.extracted_text.length).toBeGreaterThan(1_000);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(e.data.extracted_text)).toBe(false);
    expect(text.startsWith(e.data.extracted_text)).toBe(true);
  });

  it('then the subject, then the To list, in mail built to be absurd', () => {
    const e = fitted(received('t'.repeat(5_000), 's'.repeat(5_000), Array.from({ length: 400 }, (_, i) => `to${i}@x.test`)), 2_000);
    expect(size(e)).toBeLessThanOrEqual(2_000);
    expect(e.data.extracted_text).toBe('');
    expect(e.data.subject).toBe('');
    expect(e.data.to_addresses.length).toBeGreaterThanOrEqual(1);
    expect(e.data.to_addresses[0]).toBe('to0@x.test');
  });
});
