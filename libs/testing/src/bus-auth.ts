/**
 * A test run's bus credentials. The run's NATS server trusts an operator whose account key
 * is in TEST_NATS_AUTH_DIR (the launcher writes it under .data/); with it each test context
 * mints its own users: every service identity limited to the context's namespace, exactly
 * as production's, plus a `tests` identity that may do anything (set-up, cleanup, taps).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credsAuthenticator } from '@nats-io/transport-node';
import { CONTEXT_SIGNER, connectBus, contextSeal, mintCreds, mintIdentities, readAccountKey, readBusIdentity, readSubjectKeys, subjectKeysFile, writeSecretFiles, type Bus } from '@mailroom/messaging';
import { PUBLISHED_SUBJECTS } from '@mailroom/contracts';
import { createLogger } from '@mailroom/platform';

export const TESTS_IDENTITY = 'tests';

let superuser: Promise<Uint8Array> | undefined;

function account() {
  const dir = process.env.TEST_NATS_AUTH_DIR;
  if (!dir) throw new Error('TEST_NATS_AUTH_DIR is not set: run the tests with `npm test`, which starts NATS with an operator and sets it (or point it at a directory written by `bus-credentials`)');
  return readAccountKey(dir);
}

/** Credentials of the `tests` identity: every subject, every JetStream API. */
export function superuserCreds(): Promise<Uint8Array> {
  superuser ??= mintCreds(account(), TESTS_IDENTITY, { pub: { allow: ['>'], deny: [] }, sub: { allow: ['>'], deny: [] } }).then((text) => new TextEncoder().encode(text));
  return superuser;
}

/** Connection options of the `tests` identity, for plain NATS clients. */
export async function superuserAuth() {
  return { authenticator: credsAuthenticator(await superuserCreds()) };
}

/** Writes every identity's credentials for `namespace` (and the tests identity's) into a new private directory. */
export async function writeTestCredentials(namespace: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `mailroom-creds-${namespace}-`));
  const busMaster = randomBytes(32);
  const files = await mintIdentities(account(), namespace, { busMaster });
  files[`${TESTS_IDENTITY}.creds`] = new TextDecoder().decode(await superuserCreds());
  // The tests publish and read every stored subject, as its publisher would.
  files[`${TESTS_IDENTITY}.subject-keys`] = subjectKeysFile(busMaster, PUBLISHED_SUBJECTS);
  writeSecretFiles(dir, files);
  return dir;
}

/** A bus on a test context's namespace as one identity (default: tests, which may do anything). */
export async function connectTestBus(env: Record<string, string | undefined>, identity = TESTS_IDENTITY, name = 'test'): Promise<Bus> {
  const dir = env.NATS_CREDENTIALS_DIR;
  const creds = dir ? new Uint8Array(readFileSync(join(dir, `${identity}.creds`))) : await superuserCreds();
  // The tests identity speaks for tenants as the gateway does: with its seal.
  const gateway = dir && identity === TESTS_IDENTITY ? await readBusIdentity(dir, CONTEXT_SIGNER) : undefined;
  const subjectKeys = dir ? readSubjectKeys(join(dir, `${identity}.subject-keys`)) : undefined;
  return connectBus({
    ...(subjectKeys ? { subjectKeys } : {}),
    ...(gateway?.sealMaster ? { seal: contextSeal({ masterKey: gateway.sealMaster, keys: [] }) } : {}),
    servers: env.NATS_URL!.split(','),
    name,
    namespace: env.BUS_NAMESPACE,
    log: createLogger({ service: name, level: 'silent' }),
    identity: { name: identity, creds },
  });
}
