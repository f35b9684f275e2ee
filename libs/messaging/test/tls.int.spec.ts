/**
 * The bus over TLS, against a nats-server of the test's own that requires it (the shared one
 * has no TLS): a CA generated with openssl, a server certificate for 127.0.0.1 named
 * localhost (see makeServerCertificate), and a plain server beside it.
 */
import { rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import type { NatsConnectionImpl } from '@nats-io/nats-core/internal';
import { createLogger } from '@mailroom/platform';
import { makeServerCertificate, natsServerDir, operatorInclude, startOwnNatsServer, superuserCreds, type OwnNatsServer, type TlsFiles } from '@mailroom/testing';
import { connectBus, type Bus } from '../src';
import { CoalescingTransport } from '../src/transport';

const log = createLogger({ service: 'test', level: 'silent' });
let tlsServer: OwnNatsServer | undefined;
let plainServer: OwnNatsServer | undefined;
let files: TlsFiles;
const buses: Bus[] = [];

beforeAll(async () => {
  const dir = natsServerDir();
  try {
    files = makeServerCertificate(dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // verify: false: clients are not asked for certificates (they authenticate otherwise).
  tlsServer = await startOwnNatsServer(
    (port, d) => `listen: 127.0.0.1:${port}
tls {
  cert_file: "${files.certFile}"
  key_file: "${files.keyFile}"
  ca_file: "${files.caFile}"
  verify: false
}
jetstream { store_dir: "${d}/js" }
${operatorInclude(d)}
`,
    { dir },
  );
  plainServer = await startOwnNatsServer((port, d) => `listen: 127.0.0.1:${port}\njetstream { store_dir: "${d}/js" }\n${operatorInclude(d)}\n`);
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.drain()));
  await tlsServer?.stop();
  await plainServer?.stop();
});

async function bus(servers: string, tls?: Partial<TlsFiles>): Promise<Bus> {
  const b = await connectBus({ servers, name: 'tls-test', log, identity: { name: 'tests', creds: await superuserCreds() }, ...(tls ? { tls } : {}) });
  buses.push(b);
  return b;
}

describe('the bus over TLS', () => {
  it('with the CA: requests, replies and JetStream publishes travel encrypted, through the coalescing transport', async () => {
    const b = await bus(`tls://localhost:${tlsServer!.port}`, { caFile: files.caFile });
    const transport = (b.nc as unknown as NatsConnectionImpl).protocol.transport as CoalescingTransport;
    expect(transport).toBeInstanceOf(CoalescingTransport);
    expect(transport.isEncrypted()).toBe(true);

    b.nc.subscribe('tls.echo', {
      callback: (_err, m) => {
        m.respond(`echo ${m.string()}`);
      },
    });
    await b.nc.flush();
    expect((await b.nc.request('tls.echo', 'ping', { timeout: 5_000 })).string()).toBe('echo ping');

    await b.jsm.streams.add({ name: 'TLS_PROBE', subjects: ['tls.probe.>'] });
    const ack = await b.js.publish('tls.probe.one', 'stored', { msgID: 'one' });
    expect(ack).toMatchObject({ stream: 'TLS_PROBE', seq: 1, duplicate: false });
    expect((await b.jsm.streams.getMessage('TLS_PROBE', { seq: 1 }))?.string()).toBe('stored');
  });

  it('without the CA the server is not trusted: refused', async () => {
    await expect(bus(`tls://localhost:${tlsServer!.port}`)).rejects.toThrow(/certificate/i);
  });

  it('a plain connection is refused: the server never answers a PING sent in the clear', async () => {
    const socket = tcpConnect(tlsServer!.port, '127.0.0.1');
    let received = '';
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      // After its INFO (which says TLS is required), speak plain NATS as an old client would.
      if (received.includes('\r\n') && !socket.writableEnded) socket.end('CONNECT {"verbose":false,"tls_required":false}\r\nPING\r\n');
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('close', () => resolve());
      socket.once('error', reject);
    });
    expect(received).toMatch(/^INFO .*"tls_required":true/);
    expect(received).not.toContain('PONG');
  });

  it('a tls:// URL never falls back to plain text on a server without TLS', async () => {
    await expect(bus(`tls://127.0.0.1:${plainServer!.port}`)).rejects.toThrow(/tls/i);
    // The same server, named nats://, is fine: TLS is asked for by the URL or the files, not assumed.
    await expect(bus(`nats://127.0.0.1:${plainServer!.port}`)).resolves.toBeDefined();
  });

  it('CA files alone turn TLS on, with a nats:// URL too', async () => {
    await expect(bus(`nats://127.0.0.1:${plainServer!.port}`, { caFile: files.caFile })).rejects.toThrow(/tls/i);
  });
});
