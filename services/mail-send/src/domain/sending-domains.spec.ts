import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { AppError, newId, type SigningKey } from '@mailroom/contracts';
import { ManualClock } from '@mailroom/platform';
import { domainRefusal } from './checks';
import type { DkimKey } from './dkim';
import { OutboundIdentity, SendingDomains, SigningUnavailable, domainOf, type OpenKey, type SigningKeyLookup } from './sending-domains';
import { Verp } from './verp';

const ORG = newId('organization');
const ENV = newId('environment');
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const answer = (over: Partial<SigningKey> = {}): SigningKey => ({
  domain_id: newId('domain'),
  domain_name: 'example.com',
  status: 'verified',
  failure_reason: null,
  selector: 'mrabcdefgh',
  private_key_sealed: Buffer.from('sealed').toString('base64'),
  bounce_domain: 'bounces.example.com',
  ...over,
});

function domainsWith(lookup: SigningKeyLookup, open: OpenKey = () => privateKey, clock = new ManualClock(new Date('2026-11-30T10:00:00Z'))) {
  const asked: string[] = [];
  const domains = new SendingDomains(async (o, e, n) => (asked.push(n), lookup(o, e, n)), open, clock, 60_000);
  return { domains, asked, clock };
}

describe('custom domains\' signing keys', () => {
  it('asks once, opens the key once, and keeps it until the TTL', async () => {
    let opened = 0;
    const { domains, asked, clock } = domainsWith(async () => answer(), () => (opened++, privateKey));
    const [a, b] = await Promise.all([domains.of(ORG, ENV, 'example.com'), domains.of(ORG, ENV, 'example.com')]);
    expect(a).toBe(b);
    expect(a).toMatchObject({ name: 'example.com', status: 'verified', bounceDomain: 'bounces.example.com', key: { domain: 'example.com', selector: 'mrabcdefgh', privateKey } });
    await domains.of(ORG, ENV, 'example.com');
    expect([asked.length, opened]).toEqual([1, 1]);
    clock.advance(60_000);
    await domains.of(ORG, ENV, 'example.com');
    expect(asked.length).toBe(2);
  });

  it('drops a domain when a fact about it comes, also one being asked for then', async () => {
    let status: SigningKey['status'] = 'pending';
    let release!: () => void;
    let gate: Promise<void> | undefined;
    const { domains, asked } = domainsWith(async () => {
      await gate;
      return answer({ status });
    });
    expect((await domains.of(ORG, ENV, 'example.com'))?.status).toBe('pending');
    status = 'verified';
    domains.forget(ORG, ENV, 'example.com');
    expect((await domains.of(ORG, ENV, 'example.com'))?.status).toBe('verified');
    // A lookup that began before a fact answers its caller, but is not kept.
    gate = new Promise<void>((r) => (release = r));
    domains.forget(ORG, ENV, 'example.com');
    const slow = domains.of(ORG, ENV, 'example.com');
    domains.forget(ORG, ENV, 'example.com');
    release();
    await slow;
    gate = undefined;
    const before = asked.length;
    await domains.of(ORG, ENV, 'example.com');
    expect(asked.length).toBe(before + 1);
  });

  it('keeps nothing for a name the environment does not have, and says when a key does not open', async () => {
    const { domains, asked } = domainsWith(async () => null);
    expect(await domains.of(ORG, ENV, 'nowhere.example')).toBeNull();
    expect(await domains.of(ORG, ENV, 'nowhere.example')).toBeNull();
    expect(asked.length).toBe(2);
    const { domains: broken } = domainsWith(async () => answer(), () => {
      throw new Error('Unsupported state or unable to authenticate data');
    });
    await expect(broken.of(ORG, ENV, 'example.com')).rejects.toThrow(/SECRETS_ENCRYPTION_KEY must be the same/);
  });
});

describe('who a message is from, for the relay', () => {
  const verp = new Verp(randomBytes(32).toString('base64'), 'bounces.mailroom.test');
  const platformKey: DkimKey = { domain: 'mailroom.test', selector: 'mailroom', privateKey: privateKey as KeyObject };
  const job = (address: string) => ({ org_id: ORG, env_id: ENV, message_id: newId('message'), from: { address, name: null } });

  it('signs MAIL_DOMAIN\'s mail with the platform key, a custom domain\'s with its own, returning to its bounce name once that verifies', async () => {
    let bounce: string | null = 'bounces.example.com';
    const { domains } = domainsWith(async () => answer({ bounce_domain: bounce }));
    const identity = new OutboundIdentity('mailroom.test', platformKey, verp, domains);
    const own = job('agent@Mailroom.test');
    expect(await identity.of(own)).toEqual({ dkim: platformKey, returnPath: verp.address(own.message_id) });
    const custom = job('support@example.com');
    const signed = await identity.of(custom);
    expect(signed.dkim).toMatchObject({ domain: 'example.com', selector: 'mrabcdefgh' });
    expect(signed.returnPath).toBe(verp.address(custom.message_id, 'bounces.example.com'));
    bounce = null;
    domains.forget(ORG, ENV, 'example.com');
    expect((await identity.of(custom)).returnPath).toBe(verp.address(custom.message_id));
  });

  it('signs an accepted message whose domain stopped verifying; one whose domain is gone, or whose key cannot be fetched, waits and retries', async () => {
    const { domains } = domainsWith(async () => answer({ status: 'failed', failure_reason: 'DKIM record missing' }));
    expect((await new OutboundIdentity('mailroom.test', platformKey, verp, domains).of(job('a@example.com'))).dkim?.domain).toBe('example.com');
    const { domains: gone } = domainsWith(async () => null);
    await expect(new OutboundIdentity('mailroom.test', platformKey, verp, gone).of(job('a@example.com'))).rejects.toThrow(new SigningUnavailable('example.com is no longer a domain of this environment (deleted): its mail cannot be signed'));
    const { domains: down } = domainsWith(async () => {
      throw new AppError('service_unavailable', 'no responders');
    });
    await expect(new OutboundIdentity('mailroom.test', platformKey, verp, down).of(job('a@example.com'))).rejects.toBeInstanceOf(SigningUnavailable);
  });

  it('reads the domain of an address', () => {
    expect([domainOf('A@Example.COM'), domainOf('a@example.com.'), domainOf('"x@y"@example.com'), domainOf('nobody')]).toEqual(['example.com', 'example.com', 'example.com', '']);
  });
});

describe('refusing a From on a custom domain before storing', () => {
  it('refuses one not verified or not in the environment, saying which and why; passes a verified one', () => {
    expect(domainRefusal('example.com', { status: 'verified', failureReason: null })).toBeUndefined();
    expect(domainRefusal('example.com', { status: 'pending', failureReason: 'SPF record missing' })).toBe('the domain example.com is not verified (SPF record missing); sending from it resumes once it verifies');
    expect(domainRefusal('example.com', { status: 'failed', failureReason: 'DKIM record missing' })).toBe('the domain example.com is no longer verified (DKIM record missing); sending from it resumes once it verifies again');
    expect(domainRefusal('example.com', null)).toBe('the domain example.com is not a domain of this environment; add it (POST /api/v1/domains) and verify it to send from it');
  });
});
