import net from 'node:net';
import { RelayClient, relayTarget } from './relay.client';

async function server(greeting: string): Promise<{ port: number; close: () => Promise<void> }> {
  const s = net.createServer((socket) => {
    socket.on('error', () => undefined);
    // Read what comes (QUIT), so the client's end closes the socket.
    socket.resume();
    socket.write(greeting);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  return { port, close: () => new Promise((resolve) => (s.close(() => resolve()), s.unref())) };
}

describe('the relay check', () => {
  it('reads the URL: host, port (25, 465 for smtps) and TLS', () => {
    expect(relayTarget('smtp://user:pw@relay.example.net:587')).toEqual({ host: 'relay.example.net', port: 587, secure: false });
    expect(relayTarget('smtps://relay.example.net')).toEqual({ host: 'relay.example.net', port: 465, secure: true });
    expect(relayTarget('smtp://[::1]')).toEqual({ host: '::1', port: 25, secure: false });
  });

  it('is reachable on a 220 greeting (one line or several), not on a refusal or no listener', async () => {
    for (const [greeting, reachable] of [
      ['220 relay.test ESMTP\r\n', true],
      ['220-relay.test ESMTP\r\n220 welcome\r\n', true],
      ['554 no service\r\n', false],
    ] as const) {
      const s = await server(greeting);
      const res = await new RelayClient({ host: '127.0.0.1', port: s.port, secure: false }).check();
      expect([greeting, res.reachable]).toEqual([greeting, reachable]);
      await s.close();
    }
    const s = await server('');
    await s.close();
    expect(await new RelayClient({ host: '127.0.0.1', port: s.port, secure: false }).check()).toMatchObject({ reachable: false, error: expect.stringMatching(/ECONNREFUSED/) });
  });
});
