/** Made-up public events of one tenant for the metrics tests, and what they should count. */
import { newId, type EventEnvelope, type MetricsCounts } from '@mailroom/contracts';

const KINDS = ['received', 'sent', 'delivered', 'bounced_hard', 'bounced_soft', 'complained', 'rejected'] as const;

/** Event `i` of a burst: the kinds in turn, over `inboxes` inboxes and the last few hours. */
export function burstEvent(tenant: { org_id: string; env_id: string }, inboxes: readonly string[], i: number, now = Date.now()): EventEnvelope {
  const at = new Date(now - (i % 5) * 3_600_000 - (i % 1000));
  const timestamp = at.toISOString();
  const base = { id: newId('event', at.getTime()), timestamp, org_id: tenant.org_id, env_id: tenant.env_id };
  const inbox_id = inboxes[i % inboxes.length]!;
  const msg = { message_id: newId('message'), thread_id: newId('thread'), inbox_id };
  switch (KINDS[i % KINDS.length]!) {
    case 'received':
      return { ...base, type: 'message.received', data: { ...msg, from_address: 'a@sender.test', to_addresses: ['b@agents.test'], subject: 's', extracted_text: 't', has_attachments: false, received_at: timestamp } };
    case 'sent':
      return { ...base, type: 'message.sent', data: { ...msg, from_address: 'b@agents.test', to_addresses: ['a@sender.test'], subject: 's', provider_message_id: 'p', sent_at: timestamp } };
    case 'delivered':
      return { ...base, type: 'message.delivered', data: { ...msg, to_addresses: ['a@sender.test'], delivered_at: timestamp, processing_time_ms: (i * 37) % 20_000 } };
    case 'bounced_hard':
    case 'bounced_soft':
      return {
        ...base,
        type: 'message.bounced',
        data: { ...msg, bounce_type: KINDS[i % KINDS.length] === 'bounced_hard' ? 'Permanent' : 'Transient', bounce_sub_type: 'General', bounced_recipients: [], bounced_at: timestamp },
      };
    case 'complained':
      return { ...base, type: 'message.complained', data: { message_id: msg.message_id, inbox_id, complained_recipients: ['a@sender.test'], feedback_type: 'abuse', complained_at: timestamp } };
    case 'rejected':
      return { ...base, type: 'message.rejected', data: { inbox_id, from_address: 'b@agents.test', to_addresses: ['a@sender.test'], subject: 's', rejection_reason: 'rate_limited', rejection_detail: 'd', rejected_at: timestamp } };
  }
}

/** What the events count, summed. */
export function expectedTotals(events: readonly EventEnvelope[]): MetricsCounts {
  const t: MetricsCounts = { received: 0, sent: 0, delivered: 0, bounced_hard: 0, bounced_soft: 0, complained: 0, rejected: 0, rejected_by_reason: { blocked_recipient: 0, rate_limited: 0, account_paused: 0 } };
  for (const e of events) {
    if (e.type === 'message.received') t.received++;
    else if (e.type === 'message.sent') t.sent++;
    else if (e.type === 'message.delivered') t.delivered++;
    else if (e.type === 'message.bounced') t[e.data.bounce_type === 'Permanent' ? 'bounced_hard' : 'bounced_soft']++;
    else if (e.type === 'message.complained') t.complained++;
    else if (e.type === 'message.rejected') {
      t.rejected++;
      t.rejected_by_reason[e.data.rejection_reason]++;
    }
  }
  return t;
}
