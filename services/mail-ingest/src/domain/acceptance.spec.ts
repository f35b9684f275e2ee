import { inboundMail, type AuthResults, type FeedbackMail, type InboundMail } from '@mailroom/contracts';
import { ManualClock, createLogger } from '@mailroom/platform';
import { Acceptance, NotQueued, type HandOff } from './acceptance';
import { SmtpReply } from './replies';
import type { SpamScanner } from './spam';

const log = createLogger({ service: 't', level: 'silent' });
const pass = { result: 'pass' } as const;
const auth: AuthResults = { spf: pass, dkim: { result: 'none' }, dmarc: pass, arc: { result: 'none' } };
const env = {
  ip: '192.0.2.1',
  helo: 'mail.example.com',
  tls: false,
  mailFrom: 'a@example.com',
  recipients: [
    { kind: 'inbox' as const, address: 'x@agents.test', inbox_id: 'inb_01m8174x7arvmr0wr1z2nwr1sc', org_id: 'org_01m8174x7hbwtr6nz5yw8gkpdq', env_id: 'env_01m8174x7nc2fs021yjym3tbz4' },
    { kind: 'inbox' as const, address: 'X+alias@agents.test', inbox_id: 'inb_01m8174x7arvmr0wr1z2nwr1sc', org_id: 'org_01m8174x7hbwtr6nz5yw8gkpdq', env_id: 'env_01m8174x7nc2fs021yjym3tbz4' },
  ],
};

function scanner(result: { score: number | null; verdict: 'ham' | 'spam' | 'unscanned'; reject: boolean }): SpamScanner {
  return { scan: async () => result };
}

/**
 * `publishFails`: how many publishes fail first (each the way a timeout does: stored or not,
 * no word); `notQueued`: every publish fails as one no stream took (nothing stored).
 */
function handOff(fail: { put?: boolean; publish?: boolean; publishFails?: number; notQueued?: boolean; timeoutThenNotQueued?: boolean } = {}) {
  const objects = new Map<string, Buffer>();
  const published: InboundMail[] = [];
  const reports: FeedbackMail[] = [];
  const tries: string[] = [];
  let failing = fail.publish ? Infinity : (fail.publishFails ?? 0);
  const h: HandOff = {
    putRaw: async (id, raw) => {
      if (fail.put) throw new Error('object store down');
      objects.set(id, raw);
    },
    deleteRaw: async (id) => void objects.delete(id),
    publish: async (item) => {
      tries.push(item.raw_id);
      if (fail.notQueued || (fail.timeoutThenNotQueued && tries.length > 1)) throw new NotQueued('no stream took mail.inbound');
      if (fail.timeoutThenNotQueued) throw new Error('TIMEOUT');
      if (failing-- > 0) throw new Error('no ack');
      published.push(item);
    },
    publishFeedback: async (item) => {
      tries.push(item.raw_id);
      if (failing-- > 0) throw new Error('no ack');
      reports.push(item);
    },
  };
  return { h, objects, published, reports, tries };
}

const raw = Buffer.from('Subject: hi\r\n\r\nhello\r\n');

describe('Acceptance', () => {
  it('queues a small message with its bytes inside the item, one item per inbox', async () => {
    const { h, objects, published } = handOff();
    const a = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), h, new ManualClock(), 1024);
    const accepted = await a.accept(raw, env, log);
    expect(objects.size).toBe(0);
    expect(published).toHaveLength(1);
    const item = inboundMail.parse(published[0]);
    expect(item).toMatchObject({ raw_id: accepted.rawId, size: raw.length, mail_from: 'a@example.com', auth, spam: { score: 1, verdict: 'ham' } });
    expect(item.recipients).toHaveLength(1);
    expect(Buffer.from(item.raw!, 'base64')).toEqual(raw);
  });

  it('stores a large message in the object store before queueing it', async () => {
    const { h, objects, published } = handOff();
    const a = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), h, new ManualClock(), 4);
    const accepted = await a.accept(raw, env, log);
    expect(objects.get(accepted.rawId)).toEqual(raw);
    expect(published[0]!.raw).toBeUndefined();
  });

  it('answers 451 when the bytes cannot be stored, or the item gets no acknowledgement in three tries', async () => {
    const stored = handOff({ put: true });
    const a = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), stored.h, new ManualClock(), 4, [0, 0]);
    await expect(a.accept(raw, env, log)).rejects.toMatchObject({ responseCode: 451 });
    expect(stored.objects.size).toBe(0);
    expect(stored.tries).toHaveLength(0);

    const queued = handOff({ publish: true });
    const b = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), queued.h, new ManualClock(), 4, [0, 0]);
    await expect(b.accept(raw, env, log)).rejects.toMatchObject({ responseCode: 451 });
    expect(queued.published).toHaveLength(0);
    // The same item three times (one msgID); its raw object kept, as the item may be stored.
    expect(queued.tries).toHaveLength(3);
    expect(new Set(queued.tries).size).toBe(1);
    expect(queued.objects.size).toBe(1);
  });

  it('removes the raw object of an item no stream took (nothing stored), after its tries', async () => {
    const { h, objects, tries } = handOff({ notQueued: true });
    const a = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), h, new ManualClock(), 4, [0, 0]);
    await expect(a.accept(raw, env, log)).rejects.toMatchObject({ responseCode: 451 });
    expect(tries).toHaveLength(3);
    expect(objects.size).toBe(0);
  });

  it('keeps the raw object when one try had no answer, though the later ones found no stream', async () => {
    const { h, objects, tries } = handOff({ timeoutThenNotQueued: true });
    const a = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), h, new ManualClock(), 4, [0, 0]);
    await expect(a.accept(raw, env, log)).rejects.toMatchObject({ responseCode: 451 });
    expect(tries).toHaveLength(3);
    expect(objects.size).toBe(1);
  });

  it('publishes an item again under the same msgID when an acknowledgement did not come, and accepts', async () => {
    for (const size of [1024, 4]) {
      const { h, objects, published, tries } = handOff({ publishFails: 2 });
      const a = new Acceptance(async () => auth, scanner({ score: 1, verdict: 'ham', reject: false }), h, new ManualClock(), size, [0, 0]);
      const accepted = await a.accept(raw, env, log);
      expect(tries).toEqual([accepted.rawId, accepted.rawId, accepted.rawId]);
      expect(published.map((i) => i.raw_id)).toEqual([accepted.rawId]);
      if (size === 4) expect(objects.get(accepted.rawId)).toEqual(raw);
    }
  });

  it('routes a report to our bounce domain to mail.feedback, without spam or authentication checks', async () => {
    const { h, published, reports } = handOff();
    let checked = false;
    const a = new Acceptance(
      async () => {
        checked = true;
        return auth;
      },
      scanner({ score: 99, verdict: 'spam', reject: true }),
      h,
      new ManualClock(),
      1024,
    );
    const verp = 'bounces+msg_01m81betdze3mw8mv7aj87yqgh-abcdefghjk@agents.test';
    await a.accept(raw, { ...env, mailFrom: '', recipients: [{ kind: 'feedback', address: verp }] }, log);
    expect(checked).toBe(false);
    expect(published).toHaveLength(0);
    expect(reports).toEqual([expect.objectContaining({ mail_from: '', rcpt_to: [verp], raw: raw.toString('base64') })]);
  });

  it('refuses spam at or over the reject score before storing anything, and keeps unscanned mail', async () => {
    const { h, objects, published } = handOff();
    const rejecting = new Acceptance(async () => auth, scanner({ score: 20, verdict: 'spam', reject: true }), h, new ManualClock(), 4);
    await expect(rejecting.accept(raw, env, log)).rejects.toBeInstanceOf(SmtpReply);
    expect(objects.size + published.length).toBe(0);
    const unscanned = new Acceptance(async () => auth, scanner({ score: null, verdict: 'unscanned', reject: false }), h, new ManualClock(), 1024);
    await unscanned.accept(raw, env, log);
    expect(published[0]!.spam).toEqual({ score: null, verdict: 'unscanned' });
  });
});
