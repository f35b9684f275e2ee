/** Sending a system mail: from the configured address whatever the item says, once per id, retried while temporary. */
import { newId, type SystemMail } from '@mailroom/contracts';
import { ManualClock, createLogger } from '@mailroom/platform';
import { ProviderError, type HandOver, type MailProvider, type RejectedRecipient } from '../../providers/provider';
import type { SystemMailStatus } from '../../repo/tables';
import { MAX_ATTEMPTS } from '../outbound';
import { SystemMailer, type SystemMailLog } from './system-mailer';

class MemoryLog implements SystemMailLog {
  rows = new Map<string, { status: SystemMailStatus; attempts: number; error: string | null }>();
  suppressed = new Map<string, string>();
  async claim(row: { id: string }) {
    const found = this.rows.get(row.id);
    if (!found) this.rows.set(row.id, { status: 'sending', attempts: 1, error: null });
    else if (found.status === 'sending') found.attempts++;
    const now = this.rows.get(row.id)!;
    return { status: now.status, attempts: now.attempts };
  }
  async finish(id: string, status: 'sent' | 'failed' | 'suppressed', _at: Date, error: string | null) {
    const row = this.rows.get(id);
    if (row?.status === 'sending') Object.assign(row, { status, error });
  }
  async isSuppressed(address: string) {
    return this.suppressed.has(address.toLowerCase());
  }
  async suppress(row: { address: string; reason: string }) {
    this.suppressed.set(row.address, row.reason);
  }
}

function setup(fail?: ProviderError, rejected: RejectedRecipient[] = []) {
  const handed: HandOver[] = [];
  const provider: MailProvider = {
    name: 'test',
    send: async (m) => {
      if (fail) throw fail;
      handed.push(m);
      return { providerMessageId: 'p1', rejected };
    },
    close: async () => undefined,
  };
  const log = new MemoryLog();
  const mailer = new SystemMailer(log, provider, undefined, { address: 'no-reply@agents.test', name: 'Mailroom' }, { address: (id) => `bounces+${id}-mac@bounce.agents.test` }, 'agents.test', new ManualClock());
  return { mailer, handed, log };
}

const logging = { log: createLogger({ service: 'test', level: 'silent' }) };
const mail = (): SystemMail => ({
  id: newId('systemMail'),
  to: 'grace@example.com',
  template: 'ownership_transfer.cancelled',
  data: { transfer_id: newId('ownershipTransfer'), org_name: 'Acme', owner: 'Ada', new_owner: 'Grace', recipient: 'new_owner' },
});

describe('SystemMailer', () => {
  it('sends from the system address with a VERP envelope sender naming the mail, both parts, once per id', async () => {
    const { mailer, handed } = setup();
    const m = mail();
    expect(await mailer.send(m, logging)).toBe('sent');
    expect(await mailer.send(m, logging)).toBe('already-done');
    expect(handed).toHaveLength(1);
    expect(handed[0]).toMatchObject({ from: `bounces+${m.id}-mac@bounce.agents.test`, to: ['grace@example.com'], envelopeId: m.id });
    const raw = handed[0]!.raw.toString('utf8');
    expect(raw).toMatch(/^From: Mailroom <no-reply@agents\.test>\r$/m);
    expect(raw).toMatch(new RegExp(`^Message-ID: <${m.id}@agents\\.test>\\r$`, 'm'));
    expect(raw).toMatch(/^Auto-Submitted: auto-generated\r$/m);
    expect(raw).toMatch(/Content-Type: text\/plain/);
    expect(raw).toMatch(/Content-Type: text\/html/);
  });

  it('retries a temporary failure until the attempts run out, then gives the mail up', async () => {
    const { mailer, log } = setup(new ProviderError('421 try later', true));
    const m = mail();
    for (let i = 1; i < MAX_ATTEMPTS; i++) expect(await mailer.send(m, logging)).toBe('retry');
    expect(await mailer.send(m, logging)).toBe('failed');
    expect(log.rows.get(m.id)).toMatchObject({ status: 'failed', error: '421 try later' });
    expect(await mailer.send(m, logging)).toBe('already-done');
  });

  it('gives a permanently refused mail up at once', async () => {
    const { mailer, log } = setup(new ProviderError('550 no', false));
    expect(await mailer.send(mail(), logging)).toBe('failed');
    expect(log.suppressed.size).toBe(0);
  });

  it('suppresses an address the provider refuses outright, and sends it nothing more', async () => {
    const refusal: RejectedRecipient = { address: 'grace@example.com', code: 550, status: '5.1.1', diagnostic: 'User unknown', blame: 'recipient' };
    const { mailer, log, handed } = setup(new ProviderError('550 5.1.1 User unknown', false, [refusal]));
    expect(await mailer.send(mail(), logging)).toBe('failed');
    expect(log.suppressed.get('grace@example.com')).toBe('hard_bounce');
    const next = mail();
    expect(await mailer.send({ ...next, to: 'Grace@Example.com' }, logging)).toBe('suppressed');
    expect(log.rows.get(next.id)).toMatchObject({ status: 'suppressed' });
    expect(handed).toHaveLength(0);
  });

  it('suppresses an address refused among accepted ones only when the refusal blames the address', async () => {
    const blamed = setup(undefined, [{ address: 'grace@example.com', code: 550, status: '5.1.1', diagnostic: 'User unknown', blame: 'recipient' }]);
    expect(await blamed.mailer.send(mail(), logging)).toBe('failed');
    expect(blamed.log.suppressed.get('grace@example.com')).toBe('hard_bounce');
    const content = setup(undefined, [{ address: 'grace@example.com', code: 554, status: '5.7.1', diagnostic: 'content', blame: 'message' }]);
    expect(await content.mailer.send(mail(), logging)).toBe('failed');
    expect(content.log.suppressed.size).toBe(0);
  });
});
