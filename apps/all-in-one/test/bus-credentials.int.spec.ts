/**
 * bus-credentials against a real nats-server: the operator it writes admits each identity
 * and nobody else, and a reissued identity's old credential is refused once the server has
 * reloaded the new include file, while the new one is admitted without any restart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { Namespace, inboxPrefix, reissueIdentity, writeBusCredentials } from '@mailroom/messaging';
import { natsServerDir, startOwnNatsServer, type OwnNatsServer } from '@mailroom/testing';

let server: OwnNatsServer;
let auth: string;

beforeAll(async () => {
  const dir = natsServerDir();
  auth = join(dir, 'auth');
  await writeBusCredentials(auth);
  server = await startOwnNatsServer((port, d) => `listen: 127.0.0.1:${port}\njetstream { store_dir: "${d}/js" }\ninclude "auth/nats-auth.conf"\n`, { dir });
});

afterAll(() => server?.stop());

/**
 * Connects with a credentials file's bytes and asks JetStream for the account's info (a round trip through its permissions).
 * The connect's bound is 15 s: signing the server's nonce runs slowly inside jest's VM, and 3 s once ran out on a loaded CI machine.
 */
async function admitted(creds: Uint8Array): Promise<boolean> {
  try {
    const nc = await connect({ servers: `nats://127.0.0.1:${server.port}`, maxReconnectAttempts: 0, timeout: 15_000, authenticator: credsAuthenticator(creds), inboxPrefix: inboxPrefix('webhooks', new Namespace('')) });
    await nc.close();
    return true;
  } catch (err) {
    if (/authorization/i.test(String(err))) return false;
    throw err;
  }
}

const read = (name: string) => new Uint8Array(readFileSync(join(auth, name)));

it('admits every identity it wrote', async () => {
  for (const identity of ['gateway', 'webhooks', 'migrate']) expect(await admitted(read(`${identity}.creds`))).toBe(true);
});

it('refuses a reissued identity\'s old credential once the server reloads, and admits the new one at once', async () => {
  const old = read('webhooks.creds');
  await reissueIdentity(auth, 'webhooks');
  const fresh = read('webhooks.creds');
  // Signed by the account the server already trusts: no reload needed to admit it.
  expect(await admitted(fresh)).toBe(true);
  expect(await admitted(old)).toBe(true);
  await server.reload();
  expect(await admitted(old)).toBe(false);
  expect(await admitted(fresh)).toBe(true);
  expect(await admitted(read('gateway.creds'))).toBe(true);
});
