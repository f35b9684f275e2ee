import { domainVerifiedEvent, messageReceivedEvent } from '@mailroom/testing';
import { inboxOf, subscribes, type Subscriber } from './subscription';

const tenant = { org_id: 'org_01', env_id: 'env_01' };
const all: Subscriber = { ...tenant, event_types: null, inbox_ids: null };
const event = (type: string, inbox_id: string | null) => ({ ...tenant, type, inbox_id });

describe('subscription', () => {
  it('takes the inbox of message events, none of domain.verified', () => {
    const received = messageReceivedEvent({ org_id: 'org_01', env_id: 'env_01' }, new Date());
    expect(inboxOf(received)).toBe(received.data.inbox_id);
    expect(inboxOf(domainVerifiedEvent({ org_id: 'org_01', env_id: 'env_01' }, new Date()))).toBeNull();
  });

  it('an endpoint without filters gets every event of its tenant, with or without an inbox', () => {
    expect(subscribes(all, event('message.received', 'inb_1'))).toBe(true);
    expect(subscribes(all, event('domain.verified', null))).toBe(true);
    expect(subscribes(all, { ...event('message.received', 'inb_1'), env_id: 'env_02' })).toBe(false);
    expect(subscribes(all, { ...event('message.received', 'inb_1'), org_id: 'org_02' })).toBe(false);
  });

  it('event types filter', () => {
    const sent = { ...all, event_types: ['message.sent'] };
    expect(subscribes(sent, event('message.sent', 'inb_1'))).toBe(true);
    expect(subscribes(sent, event('message.received', 'inb_1'))).toBe(false);
  });

  it('scoped to inboxes: only their events, and none of no inbox', () => {
    const scoped = { ...all, inbox_ids: ['inb_1', 'inb_2'] };
    expect(subscribes(scoped, event('message.received', 'inb_2'))).toBe(true);
    expect(subscribes(scoped, event('message.received', 'inb_3'))).toBe(false);
    expect(subscribes(scoped, event('domain.verified', null))).toBe(false);
    expect(subscribes({ ...scoped, event_types: ['message.sent'] }, event('message.received', 'inb_1'))).toBe(false);
  });
});
