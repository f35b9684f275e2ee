import { AppError } from '@mailroom/contracts';
import { RecipientResolver } from './recipients';
import { SmtpReply } from './replies';

const inbox = { inbox_id: 'inb_1', org_id: 'org_1', env_id: 'env_1' };

describe('RecipientResolver', () => {
  it('resolves our addresses case-insensitively and caches answers, found or not', async () => {
    let now = 0;
    const asked: string[] = [];
    const r = new RecipientResolver(new Set(['agents.test']), async (a) => (asked.push(a), a === 'box@agents.test' ? inbox : null), 5_000, () => now);
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
    const r = new RecipientResolver(new Set(['agents.test']), async () => {
      throw new Error('not asked');
    }, 5_000, Date.now, 'bounce.agents.test');
    const verp = 'bounces+msg_01m81betdze3mw8mv7aj87yqgh-abcdefghjk@bounce.agents.test';
    await expect(r.resolve(verp.toUpperCase())).resolves.toEqual({ kind: 'feedback', address: verp });
    await expect(r.resolve('bounces+nonsense@bounce.agents.test')).rejects.toMatchObject({ reply: 'relayDenied' });
  });

  it('refuses other domains and malformed addresses without a lookup', async () => {
    const r = new RecipientResolver(new Set(['agents.test']), async () => {
      throw new Error('not asked');
    }, 5_000);
    await expect(r.resolve('x@gmail.com')).rejects.toMatchObject({ reply: 'relayDenied' });
    await expect(r.resolve('no-at-sign')).rejects.toMatchObject({ reply: 'badAddress' });
  });

  it('answers 451 when the mailbox service is unavailable, and does not cache that', async () => {
    let fail = true;
    const r = new RecipientResolver(new Set(['agents.test']), async () => {
      if (fail) throw new AppError('service_unavailable', 'down');
      return inbox;
    }, 5_000);
    await expect(r.resolve('box@agents.test')).rejects.toMatchObject({ reply: 'tryLater', responseCode: 451 });
    fail = false;
    await expect(r.resolve('box@agents.test')).resolves.toMatchObject(inbox);
  });
});
