/** Spec envelopes for tests, valid against libs/contracts. */
import { newId, type EnvelopeOf } from '@mailroom/contracts';

export function messageReceivedEvent(tenant: { org_id: string; env_id: string }, at = new Date()): EnvelopeOf<'message.received'> {
  const ts = at.toISOString();
  return {
    id: newId('event', at.getTime()),
    type: 'message.received',
    timestamp: ts,
    org_id: tenant.org_id,
    env_id: tenant.env_id,
    data: {
      message_id: newId('message'),
      thread_id: newId('thread'),
      inbox_id: newId('inbox'),
      from_address: 'sender@example.com',
      to_addresses: ['agent@agents.example.com'],
      subject: 'Hello',
      extracted_text: 'Hello there',
      has_attachments: false,
      received_at: ts,
    },
  };
}

export function domainVerifiedEvent(tenant: { org_id: string; env_id: string }, at = new Date()): EnvelopeOf<'domain.verified'> {
  const ts = at.toISOString();
  return {
    id: newId('event', at.getTime()),
    type: 'domain.verified',
    timestamp: ts,
    org_id: tenant.org_id,
    env_id: tenant.env_id,
    data: {
      domain_id: newId('domain'),
      domain_name: 'mail.example.com',
      verification_status: 'verified',
      spf_status: 'pass',
      dkim_status: 'pass',
      dmarc_status: 'pass',
      verified_at: ts,
    },
  };
}
