import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode } from '@nats-io/jwt';
import { BUS_IDENTITIES } from '@mailroom/contracts';
import { CredentialsExist, readAccountKey, readBusIdentity, writeBusCredentials } from './credentials';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bus-creds-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('bus credentials', () => {
  it('writes the server include, the signing seeds and a credential per identity carrying its permissions', async () => {
    const files = await writeBusCredentials(join(dir, 'out'), { namespace: 'prod' });
    expect(files).toEqual(expect.arrayContaining(['nats-auth.conf', 'operator.nk', 'account.nk', 'context-signers', ...BUS_IDENTITIES.map((i) => `${i}.creds`)]));
    const conf = readFileSync(join(dir, 'out', 'nats-auth.conf'), 'utf8');
    expect(conf).toMatch(/^operator: ey/m);
    expect(conf).toMatch(/^resolver: MEMORY$/m);
    const account = readAccountKey(join(dir, 'out'));
    const webhooks = await readBusIdentity(join(dir, 'out'), 'webhooks');
    const jwt = new TextDecoder().decode(webhooks.creds).match(/-----BEGIN NATS USER JWT-----\n(.+)\n/)![1]!;
    const claims = decode<{ pub: { allow: string[] } }>(jwt);
    expect(claims.iss).toBe(account.getPublicKey());
    expect(claims.nats.pub?.allow).toContain('$JS.API.CONSUMER.MSG.NEXT.prod_EVENTS.prod_webhooks--dispatch');
    const gateway = await readBusIdentity(join(dir, 'out'), 'gateway');
    expect(webhooks.contextSigners).toEqual(gateway.contextSigners);
    expect(gateway.seed).toMatch(/^SU/);
  });

  it('refuses to replace existing credentials unless forced', async () => {
    await writeBusCredentials(dir);
    const first = readFileSync(join(dir, 'account.nk'), 'utf8');
    await expect(writeBusCredentials(dir)).rejects.toBeInstanceOf(CredentialsExist);
    expect(readFileSync(join(dir, 'account.nk'), 'utf8')).toBe(first);
    await writeBusCredentials(dir, { force: true });
    expect(readFileSync(join(dir, 'account.nk'), 'utf8')).not.toBe(first);
  });

  it('says which file is missing or broken', async () => {
    await expect(readBusIdentity(dir, 'mailbox')).rejects.toThrow(/mailbox\.creds/);
    writeFileSync(join(dir, 'mailbox.creds'), 'not a creds file');
    writeFileSync(join(dir, 'context-signers'), 'UABC\n');
    await expect(readBusIdentity(dir, 'mailbox')).rejects.toThrow(/not a NATS credentials file/);
  });
});
