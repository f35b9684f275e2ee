import { AppError } from '@mailroom/contracts';
import { RecipientResolver } from './recipients';
import { SmtpReply } from './replies';
import { ServedDomains, fixedDomains, type DomainRoute } from './served-domains';

const inbox = { inbox_id: 'inb_1', org_id: 'org_1', env_id: 'env_1' };

describe('RecipientResolver', () => {
  it('resolves our addresses case-insensitively and caches answers, found or not', async () => {
    let now = 0;
    const asked: string[] = [];
    const r = new RecipientResolver(fixedDomains(['agents.test']), async (a) => (asked.push(a), a === 'box@agents.test' ? inbox : null), 5_000, () => now);
    await expect(r.resolve('Box@Agents.Test')).resolves.toEqual({ kind: 'inbox', address: 'box@agents.test', ...inbox });
    await r.resolve('box@agents.test');
    await expect(r.resolve('nobody@agents.test')).rejects.toMatchObject({ reply: 'noSuchUser', responseCode: 550 });
    await expect(r.resolve('nobody@agents.test')).rejects.toBeInstanceOf(SmtpReply);
    expect(asked).toEqual(['box@agents.test', 'nobody@agents.test']);
    now += 5_001;
    await r.resolve('box@agents.test');
    expect(asked).toHaveLength(3);
  });

  it('recognises our VERP addresses on the bounce domain without a lookup', async () => {
    const r = new RecipientResolver(fixedDomains(['agents.test']), async () => {
      throw new Error('not asked');
    }, 5_000, Date.now, 'bounce.agents.test');
    const verp = 'bounces+msg_01m81betdze3mw8mv7aj87yqgh-abcdefghjk@bounce.agents.test';
    await expect(r.resolve(verp.toUpperCase())).resolves.toEqual({ kind: 'feedback', address: verp });
    await expect(r.resolve('bounces+nonsense@bounce.agents.test')).rejects.toMatchObject({ reply: 'relayDenied' });
  });

  it('refuses other domains and malformed addresses without a lookup', async () => {
    const r = new RecipientResolver(fixedDomains(['agents.test']), async () => {
      throw new Error('not asked');
    }, 5_000);
    await expect(r.resolve('x@gmail.com')).rejects.toMatchObject({ reply: 'relayDenied' });
    await expect(r.resolve('no-at-sign')).rejects.toMatchObject({ reply: 'badAddress' });
  });

  it('answers 451 when the mailbox service is unavailable, and does not cache that', async () => {
    let fail = true;
    const r = new RecipientResolver(fixedDomains(['agents.test']), async () => {
      if (fail) throw new AppError('service_unavailable', 'down');
      return inbox;
    }, 5_000);
    await expect(r.resolve('box@agents.test')).rejects.toMatchObject({ reply: 'tryLater', responseCode: 451 });
    fail = false;
    await expect(r.resolve('box@agents.test')).resolves.toMatchObject(inbox);
  });

  describe('on custom domains', () => {
    const routes: Record<string, DomainRoute> = {
      'example.com': { served: true, catch_all_address: 'all@example.com', org_ids: ['org_1'] },
      'plain.example': { served: true, catch_all_address: null, org_ids: ['org_1'] },
    };
    const all = { inbox_id: 'inb_all', org_id: 'org_1', env_id: 'env_1' };
    const resolver = () =>
      new RecipientResolver(
        { route: async (name) => routes[name] ?? { served: false, catch_all_address: null } },
        async (a) => (a === 'box@example.com' || a === 'box@plain.example' ? inbox : a === 'all@example.com' ? all : null),
        5_000,
        Date.now,
        'bounce.agents.test',
      );

    it('takes mail for its inboxes, and for unknown addresses sends it to the catch-all', async () => {
      const r = resolver();
      await expect(r.resolve('box@example.com')).resolves.toEqual({ kind: 'inbox', address: 'box@example.com', ...inbox });
      await expect(r.resolve('anything@example.com')).resolves.toEqual({ kind: 'inbox', address: 'anything@example.com', ...all });
      await expect(r.resolve('all@example.com')).resolves.toEqual({ kind: 'inbox', address: 'all@example.com', ...all });
    });

    it('refuses unknown addresses without a catch-all, and domains it does not serve', async () => {
      const r = resolver();
      await expect(r.resolve('box@plain.example')).resolves.toMatchObject({ inbox_id: inbox.inbox_id });
      await expect(r.resolve('nobody@plain.example')).rejects.toMatchObject({ reply: 'noSuchUser' });
      await expect(r.resolve('box@pending.example')).rejects.toMatchObject({ reply: 'relayDenied' });
    });

    it('takes our VERP addresses on bounces.<a served domain>, and nothing else there', async () => {
      const r = resolver();
      const verp = 'bounces+msg_01m81betdze3mw8mv7aj87yqgh-abcdefghjk@bounces.example.com';
      await expect(r.resolve(verp)).resolves.toEqual({ kind: 'feedback', address: verp });
      await expect(r.resolve('someone@bounces.example.com')).rejects.toMatchObject({ reply: 'relayDenied' });
      await expect(r.resolve('bounces+msg_01m81betdze3mw8mv7aj87yqgh-abcdefghjk@bounces.pending.example')).rejects.toMatchObject({ reply: 'relayDenied' });
    });

    it("refuses, or sends to the catch-all, mail for an inbox of an organization the name is no longer served for", async () => {
      const moved = new RecipientResolver(
        { route: async () => ({ served: true, catch_all_address: 'all@moved.example', org_ids: ['org_new'] }) },
        async (a) => (a === 'old@moved.example' ? inbox : a === 'all@moved.example' ? { ...all, org_id: 'org_new' } : null),
        5_000,
      );
      await expect(moved.resolve('old@moved.example')).resolves.toEqual({ kind: 'inbox', address: 'old@moved.example', ...all, org_id: 'org_new' });
      const noCatchAll = new RecipientResolver({ route: async () => ({ served: true, catch_all_address: 'theirs@moved.example', org_ids: ['org_new'] }) }, async () => inbox, 5_000);
      await expect(noCatchAll.resolve('old@moved.example')).rejects.toMatchObject({ reply: 'noSuchUser' });
    });

    it('answers 451 when the domains service is unavailable', async () => {
      const r = new RecipientResolver({ route: async () => Promise.reject(new AppError('service_unavailable', 'down')) }, async () => inbox, 5_000);
      await expect(r.resolve('box@example.com')).rejects.toMatchObject({ reply: 'tryLater', responseCode: 451 });
    });
  });
});

describe('ServedDomains', () => {
  it('serves its fixed names without asking, and keeps what it was told about others', async () => {
    let now = 0;
    const asked: string[] = [];
    const d = new ServedDomains(new Set(['agents.test']), async (n) => (asked.push(n), { served: n === 'example.com', catch_all_address: null }), 60_000, () => now);
    expect(await d.route('agents.test')).toEqual({ served: true, catch_all_address: null });
    expect((await d.route('example.com')).served).toBe(true);
    expect((await d.route('other.example')).served).toBe(false);
    await d.route('example.com');
    await d.route('other.example');
    expect(asked).toEqual(['example.com', 'other.example']);
    now += 60_000;
    await d.route('example.com');
    expect(asked).toHaveLength(3);
  });

  it('asks again after a fact about the name', async () => {
    let served = false;
    const d = new ServedDomains(new Set(), async () => ({ served, catch_all_address: null }), 60_000);
    expect((await d.route('example.com')).served).toBe(false);
    served = true;
    expect((await d.route('example.com')).served).toBe(false);
    d.forget('example.com');
    expect((await d.route('example.com')).served).toBe(true);
  });

  it('does not keep an answer asked before a fact arrived', async () => {
    let release!: (r: DomainRoute) => void;
    let calls = 0;
    const d = new ServedDomains(new Set(), () => (calls++, calls === 1 ? new Promise<DomainRoute>((r) => (release = r)) : Promise.resolve({ served: true, catch_all_address: null })), 60_000);
    const first = d.route('example.com');
    d.forget('example.com');
    release({ served: false, catch_all_address: null });
    expect((await first).served).toBe(false);
    expect((await d.route('example.com')).served).toBe(true);
    expect(calls).toBe(2);
  });
});
