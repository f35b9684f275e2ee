import { AppError, type EventEnvelope } from '@mailroom/contracts';
import { LOOKUP_CONCURRENCY, checkInboxOnDomain, domainLookup, inboxesOf, lookUpDomains } from './inbox-domains';

const at = '2026-11-20T10:00:00.000Z';
/** What `fn` threw (undefined when it did not). */
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
};
const sent = (id: string, inbox_id: string, env_id = 'env_1'): EventEnvelope => ({
  id,
  type: 'message.sent',
  timestamp: at,
  org_id: 'org_1',
  env_id,
  data: { message_id: 'msg_1', thread_id: 'thr_1', inbox_id, from_address: 'a@x.test', to_addresses: ['b@y.test'], subject: 's', provider_message_id: 'p', sent_at: at },
});
const verified: EventEnvelope = {
  id: 'evt_v',
  type: 'domain.verified',
  timestamp: at,
  org_id: 'org_1',
  env_id: 'env_1',
  data: { domain_id: 'dom_1', domain_name: 'x.test', verification_status: 'verified', spf_status: 'verified', dkim_status: 'verified', dmarc_status: 'verified', verified_at: at },
};

describe('the inboxes of a batch', () => {
  it('are each named once per tenant, in key order, and domain.verified names none', () => {
    expect(inboxesOf([sent('evt_1', 'inb_b'), sent('evt_2', 'inb_a'), sent('evt_3', 'inb_b'), sent('evt_4', 'inb_a', 'env_0'), verified])).toEqual([
      { org_id: 'org_1', env_id: 'env_0', inbox_id: 'inb_a' },
      { org_id: 'org_1', env_id: 'env_1', inbox_id: 'inb_a' },
      { org_id: 'org_1', env_id: 'env_1', inbox_id: 'inb_b' },
    ]);
  });
});

describe('looking up domains', () => {
  const refs = (n: number) => Array.from({ length: n }, (_, i) => ({ org_id: 'org_1', env_id: 'env_1', inbox_id: `inb_${i}` }));

  it(`asks ${LOOKUP_CONCURRENCY} inboxes at a time at most, and answers each with its domain`, async () => {
    let inFlight = 0;
    let most = 0;
    const answer = await lookUpDomains(refs(40), {
      domainOf: async (r) => {
        most = Math.max(most, ++inFlight);
        await Promise.resolve();
        inFlight--;
        return r.inbox_id === 'inb_3' ? null : 'dom_1';
      },
    });
    expect(most).toBe(LOOKUP_CONCURRENCY);
    expect(answer).toHaveLength(40);
    expect(answer[3]).toEqual({ org_id: 'org_1', env_id: 'env_1', inbox_id: 'inb_3', domain_id: null });
    expect(answer[4]!.domain_id).toBe('dom_1');
  });

  it('turns any failure into a retryable error (the batch is redelivered, never terminated)', async () => {
    const refused = await lookUpDomains(refs(2), {
      domainOf: async () => {
        throw new AppError('forbidden', 'not allowed');
      },
    }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'service_unavailable', retryable: true });
  });

  it('refuses to file an event of an inbox whose domain is not known (retryably)', () => {
    const domainOf = domainLookup([{ org_id: 'org_1', env_id: 'env_1', inbox_id: 'inb_a', domain_id: 'dom_1' }]);
    expect(domainOf({ org_id: 'org_1', env_id: 'env_1', inbox_id: 'inb_a' })).toBe('dom_1');
    expect(thrown(() => domainOf({ org_id: 'org_1', env_id: 'env_2', inbox_id: 'inb_a' }))).toMatchObject({ retryable: true });
  });
});

describe('an inbox and a domain together', () => {
  it('pass when the inbox is on the domain, and are a 400 otherwise', () => {
    expect(thrown(() => checkInboxOnDomain({ inbox_id: 'inb_a', domain_id: 'dom_1' }, 'dom_1'))).toBeUndefined();
    expect(thrown(() => checkInboxOnDomain({ inbox_id: 'inb_a', domain_id: 'dom_1' }, 'dom_2'))).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('on domain dom_2') });
    expect(thrown(() => checkInboxOnDomain({ inbox_id: 'inb_a', domain_id: 'dom_1' }, null))).toMatchObject({ message: expect.stringContaining('on no custom domain') });
  });
});
