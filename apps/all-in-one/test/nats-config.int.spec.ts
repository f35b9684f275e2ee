/**
 * The NATS configurations we ship (deploy/nats.conf for Kubernetes, deploy/nats-compose.conf
 * for docker-compose.yml) run by a real nats-server: only their paths and ports are moved
 * into a temporary folder, laid out as the deployments mount it (config/ and auth/ side by
 * side, the include relative). nats-auth.conf, which `bus-credentials` writes, is stood in
 * for by one named user: what is checked is that the files parse, include it, require TLS
 * where they should, keep monitoring on the loopback and admit nobody anonymous.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join, resolve } from 'node:path';
import { connect, credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { Namespace, inboxPrefix, writeBusCredentials } from '@mailroom/messaging';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort, makeServerCertificate, natsServerDir, startOwnNatsServer, type OwnNatsServer, type TlsFiles } from '@mailroom/testing';

const root = resolve(__dirname, '../../..');
/** A service's credentials from the directory of the server being tested. */
const asWebhooks = (dir: string) => ({
  authenticator: credsAuthenticator(new Uint8Array(readFileSync(join(dir, 'auth', 'webhooks.creds')))),
  // Its replies come only to its own inboxes.
  inboxPrefix: inboxPrefix('webhooks', new Namespace('')),
});

/** `conf` with each [from, to] replaced, every `from` found exactly once (else the file changed under the test). */
function relocate(conf: string, replacements: [RegExp, string][]): string {
  return replacements.reduce((text, [from, to]) => {
    const found = text.match(new RegExp(from.source, `${from.flags.replace('g', '')}g`))?.length ?? 0;
    if (found !== 1) throw new Error(`expected one ${from} in the configuration, found ${found}`);
    return text.replace(from, to);
  }, conf);
}

async function start(file: string, edit: (conf: string, dir: string, monitor: number) => string, before?: (dir: string) => void) {
  const dir = natsServerDir();
  await writeBusCredentials(join(dir, 'auth'));
  before?.(dir);
  const monitor = await freePort();
  const server = await startOwnNatsServer(
    (port, d) => relocate(edit(readFileSync(join(root, file), 'utf8'), d, monitor), [[/^port: 4222$/m, `listen: 127.0.0.1:${port}`]]),
    { dir, file: 'config/nats.conf', env: { SERVER_NAME: 'nats-0' } },
  );
  return { server, monitor };
}

/** The INFO a server sends first, to a client that says nothing. */
async function info(port: number): Promise<string> {
  const socket = tcpConnect(port, '127.0.0.1');
  try {
    return await new Promise<string>((ok, fail) => {
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (text.includes('\r\n')) ok(text);
      });
      socket.once('error', fail);
    });
  } finally {
    socket.destroy();
  }
}

/**
 * Connects and asks JetStream for the account's info. The connect's bound is 60 s: signing the
 * server's nonce runs slowly inside jest's VM, and the 20 s default ran out once on a loaded CI machine.
 */
async function connects(opts: ConnectionOptions): Promise<string> {
  const nc = await connect({ maxReconnectAttempts: 0, timeout: 60_000, ...opts });
  try {
    const js = await jetstreamManager(nc);
    return `jetstream:${(await js.getAccountInfo()).streams}`;
  } finally {
    await nc.close();
  }
}

describe('deploy/nats.conf (Kubernetes)', () => {
  let server: OwnNatsServer | undefined;
  let monitor: number;
  let files: TlsFiles;

  beforeAll(async () => {
    ({ server, monitor } = await start(
      'deploy/nats.conf',
      (conf, dir, monitorPort) =>
        relocate(conf, [
          // One node here: the routes to its two peers are the cluster profile's (run by hand, deploy/README.md).
          [/^cluster \{\n[\s\S]*?^\}$/m, ''],
          [/^http: 127\.0\.0\.1:8222$/m, `http: 127.0.0.1:${monitorPort}`],
          [/^(\s*)cert_file: \/etc\/nats\/tls\/tls\.crt$/m, `$1cert_file: "${files.certFile}"`],
          [/^(\s*)key_file: \/etc\/nats\/tls\/tls\.key$/m, `$1key_file: "${files.keyFile}"`],
          [/^(\s*)store_dir: \/data$/m, `$1store_dir: "${dir}/data"`],
        ]),
      (dir) => {
        mkdirSync(join(dir, 'tls'));
        files = makeServerCertificate(join(dir, 'tls'));
      },
    ));
    // Signing every service's credentials runs slowly inside jest's VM: 3-10 s here alone, past
    // 30 s once on a loaded CI machine.
  }, 120_000);

  afterAll(() => server?.stop());

  it('starts with the include beside its folder, TLS required and monitoring on the loopback only', async () => {
    expect(server!.log()).toContain(`Starting http monitor on 127.0.0.1:${monitor}`);
    expect(server!.log()).toContain('TLS required for client connections');
    expect(await info(server!.port)).toMatch(/"tls_required":true/);
    expect(await (await fetch(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`)).json()).toEqual({ status: 'ok' });
  });

  it('admits a service with its credentials over TLS with the CA, and nobody anonymous', async () => {
    const servers = `tls://localhost:${server!.port}`;
    expect(await connects({ servers, ...asWebhooks(server!.dir), tls: { caFile: files.caFile } })).toBe('jetstream:0');
    await expect(connects({ servers, tls: { caFile: files.caFile } })).rejects.toThrow(/authorization/i);
  }, 150_000);
});

describe('deploy/nats-compose.conf (docker-compose.yml)', () => {
  let server: OwnNatsServer | undefined;
  let monitor: number;

  beforeAll(async () => {
    ({ server, monitor } = await start('deploy/nats-compose.conf', (conf, dir, monitorPort) =>
      relocate(conf, [
        [/^http: 127\.0\.0\.1:8222$/m, `http: 127.0.0.1:${monitorPort}`],
        [/^(\s*)store_dir: \/data$/m, `$1store_dir: "${dir}/data"`],
      ]),
    ));
  }, 120_000);

  afterAll(() => server?.stop());

  it('starts with the include beside its folder and monitoring on the loopback only', async () => {
    expect(server!.log()).toContain(`Starting http monitor on 127.0.0.1:${monitor}`);
    expect(await (await fetch(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`)).json()).toEqual({ status: 'ok' });
  });

  it('admits a service with its credentials, with JetStream, and nobody anonymous', async () => {
    const servers = `nats://127.0.0.1:${server!.port}`;
    expect(await connects({ servers, ...asWebhooks(server!.dir) })).toBe('jetstream:0');
    await expect(connects({ servers })).rejects.toThrow(/authorization/i);
  }, 150_000);
});
