import type { EventEnvelope } from '@mailroom/contracts';
import { ALL_INBOXES, aggregate, hourOf, incrementOf } from './rollup';

const base = { org_id: 'org_1', env_id: 'env_1', timestamp: '2026-11-20T10:59:59.999Z' } as const;
const sent = (id: string, inbox = 'inb_a', timestamp: string = base.timestamp): EventEnvelope => ({
  ...base,
  timestamp,
  id,
  type: 'message.sent',
  data: { message_id: 'msg_1', thread_id: 'thr_1', inbox_id: inbox, from_address: 'a@x.test', to_addresses: ['b@y.test'], subject: 's', provider_message_id: 'p', sent_at: timestamp },
});
const bounced = (id: string, bounce_type: 'Permanent' | 'Transient'): EventEnvelope => ({
  ...base,
  id,
  type: 'message.bounced',
  data: { message_id: 'msg_1', thread_id: 'thr_1', inbox_id: 'inb_a', bounce_type, bounce_sub_type: 'General', bounced_recipients: [], bounced_at: base.timestamp },
});
const delivered = (id: string, ms: number): EventEnvelope => ({
  ...base,
  id,
  type: 'message.delivered',
  data: { message_id: 'msg_1', thread_id: 'thr_1', inbox_id: 'inb_a', to_addresses: ['b@y.test'], delivered_at: base.timestamp, processing_time_ms: ms },
});

describe('rollup increments', () => {
  it('counts an event in the hour of its timestamp, UTC', () => {
    expect(hourOf(new Date('2026-11-20T10:59:59.999Z')).toISOString()).toBe('2026-11-20T10:00:00.000Z');
    expect(incrementOf(sent('evt_1'))).toEqual({ key: { org_id: 'org_1', env_id: 'env_1', inbox_id: 'inb_a', hour: new Date('2026-11-20T10:00:00.000Z') }, counter: 'sent' });
  });

  it('tells hard from soft bounces and files rejections by reason', () => {
    expect(incrementOf(bounced('evt_1', 'Permanent'))?.counter).toBe('bounced_hard');
    expect(incrementOf(bounced('evt_2', 'Transient'))?.counter).toBe('bounced_soft');
    const rejected: EventEnvelope = {
      ...base,
      id: 'evt_3',
      type: 'message.rejected',
      data: { inbox_id: 'inb_a', from_address: 'a@x.test', to_addresses: ['b@y.test'], subject: 's', rejection_reason: 'rate_limited', rejection_detail: 'd', rejected_at: base.timestamp },
    };
    expect(incrementOf(rejected)?.counter).toBe('rejected_rate_limited');
  });

  it('counts nothing for domain.verified', () => {
    const verified: EventEnvelope = {
      ...base,
      id: 'evt_4',
      type: 'domain.verified',
      data: { domain_id: 'dom_1', domain_name: 'x.test', verification_status: 'verified', spf_status: 'verified', dkim_status: 'verified', dmarc_status: 'verified', verified_at: base.timestamp },
    };
    expect(incrementOf(verified)).toBeNull();
  });

  it('adds a batch up per hour and inbox and for all inboxes, in key order, with the latencies of deliveries', () => {
    const rows = aggregate([sent('evt_1', 'inb_b'), sent('evt_2'), sent('evt_3'), delivered('evt_4', 120), delivered('evt_5', 80), sent('evt_6', 'inb_a', '2026-11-20T11:00:00.000Z')], () => null);
    expect(rows.map((r) => [r.inbox_id, r.hour.toISOString(), r.sent, r.delivered])).toEqual([
      [ALL_INBOXES, '2026-11-20T10:00:00.000Z', 3, 2],
      ['inb_a', '2026-11-20T10:00:00.000Z', 2, 2],
      ['inb_b', '2026-11-20T10:00:00.000Z', 1, 0],
      [ALL_INBOXES, '2026-11-20T11:00:00.000Z', 1, 0],
      ['inb_a', '2026-11-20T11:00:00.000Z', 1, 0],
    ]);
    expect(rows[0]!.latency_sum_ms).toBe(200);
    expect(rows[1]!.latency_sum_ms).toBe(200);
    expect([...rows[1]!.latency.entries()].sort()).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });

  it("adds each event to its inbox's domain row too, and an inbox on no domain to none", () => {
    const domains: Record<string, string | null> = { inb_a: 'dom_1', inb_b: 'dom_1', inb_c: null };
    const rows = aggregate([sent('evt_1', 'inb_a'), sent('evt_2', 'inb_b'), delivered('evt_3', 120), sent('evt_4', 'inb_c')], (i) => domains[i.inbox_id]!);
    expect(rows.map((r) => [r.inbox_id, r.sent, r.delivered])).toEqual([
      [ALL_INBOXES, 3, 1],
      ['dom_1', 2, 1],
      ['inb_a', 1, 1],
      ['inb_b', 1, 0],
      ['inb_c', 1, 0],
    ]);
    expect(rows[1]!.latency_sum_ms).toBe(120);
    expect([...rows[1]!.latency.entries()]).toEqual([[1, 1]]);
  });

  it('files the domain under the event\'s own tenant', () => {
    const seen: string[] = [];
    aggregate([sent('evt_1', 'inb_a')], (i) => (seen.push(`${i.org_id}/${i.env_id}/${i.inbox_id}`), null));
    expect(seen).toEqual(['org_1/env_1/inb_a']);
  });
});
