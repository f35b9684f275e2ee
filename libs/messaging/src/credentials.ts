/**
 * Bus credentials in NATS's decentralized JWT model: an operator signs one account (with
 * JetStream) and the system account; the account's key signs one user per identity, whose
 * JWT carries that identity's permissions (bus-permissions.ts). nats-server trusts the
 * operator and needs no list of users: new users (a rotated service, a test run's namespace)
 * are signed without touching or reloading the server. Everything through @nats-io/jwt and
 * @nats-io/nkeys.
 *
 * A credentials directory holds `<identity>.creds` (user JWT and seed), `<identity>.seal-key`
 * (the key the gateway seals that identity's tenant contexts with, context-seal.ts),
 * `seal-master.key` (the gateway's, from which every identity's is derived),
 * `<identity>.subject-keys` (the keys of the stored subjects it publishes or reads,
 * stored-seal.ts) and `bus-master.key` (theirs), `nats-auth.conf` (the server's include
 * file) and the signing seeds `operator.nk`, `system.nk`, `account.nk`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Algorithms, decode, encodeAccount, encodeOperator, encodeUser, fmtCreds, parseCreds, type Account, type User } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { BUS_IDENTITIES, type BusIdentity } from '@mailroom/contracts';
import { busPermissions, type NatsPermissions } from './bus-permissions';
import { serviceSealKey } from './context-seal';
import { sealedSubjectsOf, subjectKey } from './stored-seal';
import { Namespace } from './namespace';

const ALG = { algorithm: Algorithms.v2 };
const encoder = new TextEncoder();

/** The identity that seals tenant contexts: it alone holds `seal-master.key`. */
export const CONTEXT_SIGNER: BusIdentity = 'gateway';

/** Key files hold base64 keys, one per line: the current one first, the previous during a rotation. */
const keyFile = (keys: Buffer[]) => `${keys.map((k) => k.toString('base64')).join('\n')}\n`;

export interface BusAuthority {
  operator: KeyPair;
  system: KeyPair;
  account: KeyPair;
}

const seedOf = (kp: KeyPair) => new TextDecoder().decode(kp.getSeed());

/** Secrets, readable by their owner only: the mode is set after writing, since a file that existed keeps its own. */
export function writeSecretFiles(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text, { mode: 0o600 });
    chmodSync(join(dir, name), 0o600);
  }
}

export function newAuthority(): BusAuthority {
  return { operator: createOperator(), system: createAccount(), account: createAccount() };
}

/**
 * The include file for nats-server: trust this operator, preload its two accounts.
 * `revocations`: user public key -> unix seconds; that user's JWTs issued before are refused.
 */
export async function serverAuthConfig(a: BusAuthority, revocations: Record<string, number> = {}): Promise<string> {
  const operatorJwt = await encodeOperator('mailroom', a.operator, { system_account: a.system.getPublicKey() }, ALG);
  const systemJwt = await encodeAccount('SYS', a.system, {}, { ...ALG, signer: a.operator });
  const accountJwt = await mailroomAccountJwt(a, revocations);
  return [
    '# Written by `mailroom bus-credentials`: trust the Mailroom operator; users are signed by its account key.',
    // A user's JWT travels in its CONNECT line; the gateway's names every operation it calls.
    'max_control_line: 65536',
    `operator: ${operatorJwt}`,
    `system_account: ${a.system.getPublicKey()}`,
    'resolver: MEMORY',
    'resolver_preload: {',
    `  ${a.system.getPublicKey()}: ${systemJwt}`,
    `  ${a.account.getPublicKey()}: ${accountJwt}`,
    '}',
    '',
  ].join('\n');
}

/** The account's JWT: no limits beyond the server's own (JetStream on, within the server's store), and its revocations. */
function mailroomAccountJwt(a: BusAuthority, revocations: Record<string, number>): Promise<string> {
  return encodeAccount(
    'MAILROOM',
    a.account,
    { limits: { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1, subs: -1, data: -1, payload: -1, conn: -1, imports: -1, exports: -1, leaf: -1, wildcards: true }, revocations },
    { ...ALG, signer: a.operator },
  );
}

/** A user of the account with these permissions, as a .creds file (JWT and seed). */
export async function mintCreds(account: KeyPair, name: string, permissions: NatsPermissions, user: KeyPair = createUser()): Promise<string> {
  const jwt = await encodeUser(name, user, account, { ...permissions, bearer_token: false }, ALG);
  return new TextDecoder().decode(fmtCreds(jwt, user));
}

/** `<subject> <base64 key>` per line, for the stored subjects given. */
export function subjectKeysFile(busMaster: Buffer, subjects: readonly string[]): string {
  return subjects.map((s) => `${s} ${subjectKey(busMaster, s).toString('base64')}\n`).join('');
}

export interface Masters {
  /** The gateway's: each identity's seal key derives from it (context-seal.ts). */
  sealMaster?: Buffer;
  /** The stored subjects' keys derive from it (stored-seal.ts); kept offline with the operator's keys. */
  busMaster?: Buffer;
}

/**
 * Every identity's creds for one namespace, the gateway's master seal key, each identity's
 * seal key and the keys of the stored subjects it publishes or reads.
 */
export async function mintIdentities(account: KeyPair, namespace: string, masters: Masters = {}): Promise<Record<string, string>> {
  const ns = new Namespace(namespace);
  const sealMaster = masters.sealMaster ?? randomBytes(32);
  const busMaster = masters.busMaster ?? randomBytes(32);
  const files: Record<string, string> = { 'seal-master.key': keyFile([sealMaster]), 'bus-master.key': keyFile([busMaster]) };
  for (const identity of BUS_IDENTITIES) {
    files[`${identity}.creds`] = await mintCreds(account, ns.consumer(identity), busPermissions(identity, ns));
    files[`${identity}.seal-key`] = keyFile([serviceSealKey(sealMaster, identity)]);
    files[`${identity}.subject-keys`] = subjectKeysFile(busMaster, sealedSubjectsOf(identity));
  }
  return files;
}

export class CredentialsExist extends Error {}

/**
 * Writes a new authority, the server's include file and every identity's credentials into
 * `dir`. Refuses when credentials are there already (new keys lock every service out until
 * each gets its new file), unless `force`.
 */
export async function writeBusCredentials(dir: string, opts: { namespace?: string; force?: boolean } = {}): Promise<string[]> {
  if (!opts.force && existsSync(join(dir, 'nats-auth.conf'))) throw new CredentialsExist(`${join(dir, 'nats-auth.conf')} exists: keep it, or pass --force to replace every key`);
  const authority = newAuthority();
  const files = await mintIdentities(authority.account, opts.namespace ?? '');
  files['nats-auth.conf'] = await serverAuthConfig(authority);
  files['operator.nk'] = `${seedOf(authority.operator)}\n`;
  files['system.nk'] = `${seedOf(authority.system)}\n`;
  files['account.nk'] = `${seedOf(authority.account)}\n`;
  writeSecretFiles(dir, files);
  return Object.keys(files);
}

function readSeed(dir: string, name: string): KeyPair {
  const file = join(dir, name);
  if (!existsSync(file)) throw new Error(`${file} is missing: a credentials directory as bus-credentials writes it is needed`);
  return fromSeed(encoder.encode(readFileSync(file, 'utf8').trim()));
}

/** The account's signing key of a credentials directory, for minting more users (a test run's namespace). */
export function readAccountKey(dir: string): KeyPair {
  return readSeed(dir, 'account.nk');
}

/** The line of `nats-auth.conf` that preloads the account's JWT, and that JWT. */
function accountLine(conf: string, accountKey: string): { line: string; jwt: string } {
  const line = conf.split('\n').find((l) => l.trim().startsWith(`${accountKey}:`));
  if (!line) throw new Error(`nats-auth.conf does not preload the account of account.nk (${accountKey})`);
  return { line, jwt: line.trim().slice(accountKey.length + 1).trim() };
}

/**
 * A new credential for one identity, signed by the kept account key (no server change needed
 * to admit it), and the one it replaces revoked in a new `nats-auth.conf`, which takes effect
 * when the server reloads it. Reissuing the gateway also makes a new master seal key: every
 * identity's seal-key file then holds its new key and its old one, until every service has
 * its file and the gateway runs with its new master key.
 */
export async function reissueIdentity(dir: string, identity: BusIdentity, opts: { namespace?: string; now?: Date } = {}): Promise<string[]> {
  const authority: BusAuthority = { operator: readSeed(dir, 'operator.nk'), system: readSeed(dir, 'system.nk'), account: readSeed(dir, 'account.nk') };
  const credsFile = join(dir, `${identity}.creds`);
  const old = existsSync(credsFile) ? (await parseCreds(readFileSync(credsFile))).uc.sub : undefined;
  const conf = readFileSync(join(dir, 'nats-auth.conf'), 'utf8');
  const current = accountLine(conf, authority.account.getPublicKey());
  const revocations = decode<Account>(current.jwt).nats.revocations ?? {};
  if (old) revocations[old] = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const ns = new Namespace(opts.namespace ?? '');
  const user = createUser();
  const files: Record<string, string> = { [`${identity}.creds`]: await mintCreds(authority.account, ns.consumer(identity), busPermissions(identity, ns), user) };
  if (identity === CONTEXT_SIGNER) {
    const previous = readKeys(join(dir, 'seal-master.key'))[0];
    const master = randomBytes(32);
    files['seal-master.key'] = keyFile([master]);
    for (const id of BUS_IDENTITIES) files[`${id}.seal-key`] = keyFile([serviceSealKey(master, id), ...(previous ? [serviceSealKey(previous, id)] : [])]);
  }
  // Only the account's JWT changes: nats-server reloads that, not a changed operator. It is
  // written first: a run cut short before the new credential is written leaves the old one
  // revoked and still in place, and the next run revokes that same key again.
  const jwt = await mailroomAccountJwt(authority, revocations);
  writeSecretFiles(dir, { 'nats-auth.conf': conf.replace(current.line, current.line.replace(current.jwt, jwt)) });
  writeSecretFiles(dir, files);
  return ['nats-auth.conf', ...Object.keys(files)];
}

/** What a user JWT lets its holder do, as the server reads it. */
function permissionsOf(jwt: string): string {
  const { pub, sub, resp } = decode<User>(jwt).nats;
  return JSON.stringify({ pub, sub, resp });
}

/**
 * Brings a credentials directory up to the permission table after an upgrade: each identity
 * whose creds no longer carry what the table gives it (an operation, a subject, a limit added
 * or changed) is minted again with the kept account key, which the server admits without a
 * change; each whose subject keys miss a stored subject it now publishes or reads gets them,
 * derived from the kept bus-master.key. The replaced creds are not revoked: they only held
 * what an earlier table gave. Returns the files written.
 */
export async function refreshStaleIdentities(dir: string, opts: { namespace?: string } = {}): Promise<string[]> {
  const account = readAccountKey(dir);
  const busMaster = readKeys(join(dir, 'bus-master.key'))[0];
  if (!busMaster) throw new Error(`${join(dir, 'bus-master.key')} is missing: a credentials directory as bus-credentials writes it is needed`);
  const ns = new Namespace(opts.namespace ?? '');
  const files: Record<string, string> = {};
  for (const identity of BUS_IDENTITIES) {
    const credsFile = join(dir, `${identity}.creds`);
    const fresh = await mintCreds(account, ns.consumer(identity), busPermissions(identity, ns));
    // An identity the upgrade added has no creds yet.
    const current = existsSync(credsFile) ? (await parseCreds(readFileSync(credsFile))).jwt : undefined;
    if (current === undefined || permissionsOf(current) !== permissionsOf((await parseCreds(encoder.encode(fresh))).jwt)) files[`${identity}.creds`] = fresh;
    const keysFile = join(dir, `${identity}.subject-keys`);
    const keys = subjectKeysFile(busMaster, sealedSubjectsOf(identity));
    if (!existsSync(keysFile) || readFileSync(keysFile, 'utf8') !== keys) files[`${identity}.subject-keys`] = keys;
  }
  writeSecretFiles(dir, files);
  return Object.keys(files);
}

export interface BusIdentityFiles {
  /** The .creds file's bytes, for the connection. */
  creds: Uint8Array;
  /** Keys of the stored subjects it publishes or reads, by subject. */
  subjectKeys: Map<string, Buffer>;
  /** The keys tenant contexts sent to this identity are sealed with (two during a rotation). */
  sealKeys: Buffer[];
  /** The gateway's master seal key. */
  sealMaster?: Buffer;
}

/** Base64 keys, one per line; an error naming the file for anything else. */
function readKeys(file: string): Buffer[] {
  if (!existsSync(file)) return [];
  const keys = readFileSync(file, 'utf8')
    .split(/\s+/)
    .filter((k) => k.length > 0)
    .map((k) => Buffer.from(k, 'base64'));
  if (keys.some((k) => k.length < 32)) throw new Error(`${file} holds a key shorter than 32 bytes (base64, one per line)`);
  return keys;
}

/** Reads `<identity>.creds` and `<identity>.seal-key` (and the gateway's `seal-master.key`); a clear error for what is missing. */
export async function readBusIdentity(dir: string, identity: string): Promise<BusIdentityFiles> {
  const credsFile = join(dir, `${identity}.creds`);
  const needed = [credsFile, join(dir, `${identity}.seal-key`), join(dir, `${identity}.subject-keys`), ...(identity === CONTEXT_SIGNER ? [join(dir, 'seal-master.key')] : [])];
  for (const f of needed) if (!existsSync(f)) throw new Error(`NATS_CREDENTIALS_DIR has no ${f}`);
  const creds = readFileSync(credsFile);
  await parseCreds(creds).catch((err: unknown) => {
    throw new Error(`${credsFile} is not a NATS credentials file`, { cause: err });
  });
  const sealKeys = readKeys(join(dir, `${identity}.seal-key`));
  if (sealKeys.length === 0) throw new Error(`${join(dir, `${identity}.seal-key`)} holds no key`);
  const sealMaster = identity === CONTEXT_SIGNER ? readKeys(join(dir, 'seal-master.key'))[0] : undefined;
  return { creds: new Uint8Array(creds), sealKeys, subjectKeys: readSubjectKeys(join(dir, `${identity}.subject-keys`)), ...(sealMaster ? { sealMaster } : {}) };
}

/** `<subject> <base64 key>` lines; an error naming the file for anything else. */
export function readSubjectKeys(file: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const [subject, key, extra] = line.trim().split(/\s+/);
    const bytes = Buffer.from(key ?? '', 'base64');
    if (!subject || extra !== undefined || bytes.length < 32) throw new Error(`${file}: each line is "<subject> <base64 key of 32 bytes>"`);
    keys.set(subject, bytes);
  }
  return keys;
}
