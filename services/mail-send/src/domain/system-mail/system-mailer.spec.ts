/** Sending a system mail: from the configured address whatever the item says, once per id, retried while temporary. */
import { newId, type SystemMail } from '@mailroom/contracts';
import { ManualClock, createLogger } from '@mailroom/platform';
import { ProviderError, type HandOver, type MailProvider } from '../../providers/provider';
import { MAX_ATTEMPTS } from '../outbound';
import { SystemMailer, type SystemMailLog } from './system-mailer';

class MemoryLog implements SystemMailLog {
  rows = new Map<string, { status: 'sending' | 'sent' | 'failed'; attempts: number; error: string | null }>();
  async claim(row: { id: string }) {
    const found = this.rows.get(row.id);
    if (!found) this.rows.set(row.id, { status: 'sending', attempts: 1, error: null });
    else if (found.status === 'sending') found.attempts++;
    const now = this.rows.get(row.id)!;
    return { status: now.status, attempts: now.attempts };
  }
  async finish(id: string, status: 'sent' | 'failed', _at: Date, error: string | null) {
    const row = this.rows.get(id);
    if (row?.status === 'sending') Object.assign(row, { status, error });
  }
}

function setup(fail?: ProviderError) {
  const handed: HandOver[] = [];
  const provider: MailProvider = {
    name: 'test',
    send: async (m) => {
      if (fail) throw fail;
      handed.push(m);
      return { providerMessageId: 'p1', rejected: [] };
    },
    close: async () => undefined,
  };
  const log = new MemoryLog();
  const mailer = new SystemMailer(log, provider, undefined, { address: 'no-reply@agents.test', name: 'Mailroom' }, 'agents.test', new ManualClock());
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
  it('sends from the system address, signed headers and both parts, once per id', async () => {
    const { mailer, handed } = setup();
    const m = mail();
    expect(await mailer.send(m, logging)).toBe('sent');
    expect(await mailer.send(m, logging)).toBe('already-done');
    expect(handed).toHaveLength(1);
    expect(handed[0]).toMatchObject({ from: 'no-reply@agents.test', to: ['grace@example.com'], envelopeId: m.id });
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
    const { mailer } = setup(new ProviderError('550 no', false));
    expect(await mailer.send(mail(), logging)).toBe('failed');
  });
});
