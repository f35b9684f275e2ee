import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, parseCreds } from '@nats-io/jwt';
import { BUS_IDENTITIES } from '@mailroom/contracts';
import { serviceSealKey } from './context-seal';
import { busPermissions } from './bus-permissions';
import { CredentialsExist, mintCreds, readAccountKey, readBusIdentity, refreshStaleIdentities, reissueIdentity, writeBusCredentials } from './credentials';
import { Namespace } from './namespace';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bus-creds-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// One set written for the tests that start from existing credentials (each gets a copy): a
// write signs every identity's credential with tweetnacl, about 2.5 s inside jest.
let written: string;
beforeAll(async () => {
  written = mkdtempSync(join(tmpdir(), 'bus-creds-written-'));
  await writeBusCredentials(written);
});
afterAll(() => rmSync(written, { recursive: true, force: true }));
const copyOfWritten = (to: string) => cpSync(written, to, { recursive: true });

describe('bus credentials', () => {
  it('writes the server include, the signing seeds and a credential per identity carrying its permissions', async () => {
    const files = await writeBusCredentials(join(dir, 'out'), { namespace: 'prod' });
    expect(files).toEqual(expect.arrayContaining(['nats-auth.conf', 'operator.nk', 'system.nk', 'account.nk', 'seal-master.key', 'bus-master.key', ...BUS_IDENTITIES.map((i) => `${i}.seal-key`), ...BUS_IDENTITIES.map((i) => `${i}.subject-keys`), ...BUS_IDENTITIES.map((i) => `${i}.creds`)]));
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
    // The gateway seals for webhooks with the key webhooks holds, and only the gateway holds the master.
    expect(serviceSealKey(gateway.sealMaster!, 'webhooks')).toEqual(webhooks.sealKeys[0]);
    expect(webhooks.sealMaster).toBeUndefined();
    // The keys of what it reads (every event), shared with each event's publisher.
    const mailbox = await readBusIdentity(join(dir, 'out'), 'mailbox');
    expect(webhooks.subjectKeys.get('events.message.received')).toEqual(mailbox.subjectKeys.get('events.message.received'));
    expect(webhooks.subjectKeys.has('mail.inbound')).toBe(false);
  });

  it('leaves every file readable by its owner only, also when it replaces one', async () => {
    copyOfWritten(dir);
    chmodSync(join(dir, 'gateway.creds'), 0o644);
    await writeBusCredentials(dir, { force: true });
    for (const name of ['gateway.creds', 'account.nk', 'seal-master.key', 'webhooks.seal-key']) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses to replace existing credentials unless forced', async () => {
    copyOfWritten(dir);
    const first = readFileSync(join(dir, 'account.nk'), 'utf8');
    await expect(writeBusCredentials(dir)).rejects.toBeInstanceOf(CredentialsExist);
    expect(readFileSync(join(dir, 'account.nk'), 'utf8')).toBe(first);
    await writeBusCredentials(dir, { force: true });
    expect(readFileSync(join(dir, 'account.nk'), 'utf8')).not.toBe(first);
  });

  it('says which file is missing or broken', async () => {
    await expect(readBusIdentity(dir, 'mailbox')).rejects.toThrow(/mailbox\.creds/);
    writeFileSync(join(dir, 'mailbox.creds'), 'not a creds file');
    writeFileSync(join(dir, 'mailbox.seal-key'), `${'A'.repeat(44)}\n`);
    writeFileSync(join(dir, 'mailbox.subject-keys'), `mail.inbound ${'A'.repeat(44)}\n`);
    await expect(readBusIdentity(dir, 'mailbox')).rejects.toThrow(/not a NATS credentials file/);
    copyOfWritten(join(dir, 'ok'));
    writeFileSync(join(dir, 'ok', 'mailbox.subject-keys'), 'mail.inbound\n');
    await expect(readBusIdentity(join(dir, 'ok'), 'mailbox')).rejects.toThrow(/mailbox\.subject-keys: each line is/);
  });
});

describe('reissuing one identity', () => {
  it('signs a new credential with the kept account key and revokes the old one in a new server include', async () => {
    copyOfWritten(dir);
    const before = await readBusIdentity(dir, 'webhooks');
    const oldKey = (await parseCreds(before.creds)).uc.sub;
    const now = new Date('2026-11-26T02:00:00Z');
    expect(await reissueIdentity(dir, 'webhooks', { now })).toEqual(['nats-auth.conf', 'webhooks.creds']);
    const after = await readBusIdentity(dir, 'webhooks');
    expect((await parseCreds(after.creds)).uc.sub).not.toBe(oldKey);
    const account = readAccountKey(dir).getPublicKey();
    const line = readFileSync(join(dir, 'nats-auth.conf'), 'utf8').split('\n').find((l) => l.trim().startsWith(`${account}:`))!;
    expect(decode<{ revocations?: Record<string, number> }>(line.trim().slice(account.length + 1).trim()).nats.revocations).toEqual({ [oldKey]: now.getTime() / 1000 });
    // A second reissue keeps the first revocation.
    await reissueIdentity(dir, 'mailbox', { now });
    const conf = readFileSync(join(dir, 'nats-auth.conf'), 'utf8').split('\n').find((l) => l.trim().startsWith(`${account}:`))!;
    expect(Object.keys(decode<{ revocations?: Record<string, number> }>(conf.trim().slice(account.length + 1).trim()).nats.revocations ?? {})).toHaveLength(2);
  });

  it('makes a new master seal key with the gateway, and each service holds its new key beside its old one', async () => {
    copyOfWritten(dir);
    const before = await readBusIdentity(dir, 'mailbox');
    const oldMaster = (await readBusIdentity(dir, 'gateway')).sealMaster!;
    await reissueIdentity(dir, 'gateway');
    const master = (await readBusIdentity(dir, 'gateway')).sealMaster!;
    expect(master).not.toEqual(oldMaster);
    const after = await readBusIdentity(dir, 'mailbox');
    expect(after.sealKeys).toEqual([serviceSealKey(master, 'mailbox'), before.sealKeys[0]]);
  });
});

describe('refreshing creds after the permission table changed', () => {
  it('mints again, with the kept keys, only the creds and subject keys that differ from the table', async () => {
    copyOfWritten(dir);
    const account = readAccountKey(dir);
    const ns = new Namespace('');
    const table = busPermissions('webhooks', ns);
    // As written by an earlier version: one operation fewer, and the answer window of then.
    writeFileSync(join(dir, 'webhooks.creds'), await mintCreds(account, ns.consumer('webhooks'), { ...table, pub: { ...table.pub, allow: table.pub.allow.slice(1) }, resp: { max: 1, ttl: 0 } }));
    const mailbox = readFileSync(join(dir, 'mailbox.creds'), 'utf8');
    // A stored subject added since: its key was missing from the identity's file.
    const keys = readFileSync(join(dir, 'auth.subject-keys'), 'utf8');
    writeFileSync(join(dir, 'auth.subject-keys'), keys.split('\n').slice(1).join('\n'));
    expect(await refreshStaleIdentities(dir)).toEqual(['auth.subject-keys', 'webhooks.creds']);
    expect(readFileSync(join(dir, 'auth.subject-keys'), 'utf8')).toBe(keys);
    const { uc } = await parseCreds((await readBusIdentity(dir, 'webhooks')).creds);
    expect(uc.iss).toBe(account.getPublicKey());
    expect(uc.nats.pub?.allow).toEqual(table.pub.allow);
    expect(uc.nats.resp).toEqual(table.resp);
    expect(readFileSync(join(dir, 'mailbox.creds'), 'utf8')).toBe(mailbox);
    expect(statSync(join(dir, 'webhooks.creds')).mode & 0o777).toBe(0o600);
    expect(await refreshStaleIdentities(dir)).toEqual([]);
    // An identity an upgrade added: its creds are written.
    rmSync(join(dir, 'orgs.creds'));
    expect(await refreshStaleIdentities(dir)).toEqual(['orgs.creds']);
    expect((await parseCreds((await readBusIdentity(dir, 'orgs')).creds)).uc.iss).toBe(account.getPublicKey());
    // Four full mints of every identity (each refresh compares a fresh mint): about 16 s alone on
    // this 2-core machine, more beside the rest of the suite; a bound, not a measure.
  }, 120_000);
});
