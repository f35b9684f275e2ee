import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpamScanner } from './spam';

const input = { raw: Buffer.from('Subject: x\r\n\r\nhi\r\n'), ip: '192.0.2.1', helo: 'h', mailFrom: 'a@b.c', recipients: ['x@y.z'], queueId: 'raw_1' };
const policy = { spamScore: 6, rejectScore: 15 };

function server(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const s = createServer(handler);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, server: s })));
}

describe('SpamScanner', () => {
  it('maps rspamd scores and actions to verdicts', async () => {
    let answer = { score: 2, action: 'no action' };
    const { url, server: s } = await server((_req, res) => res.end(JSON.stringify(answer)));
    try {
      const scanner = new SpamScanner(url, 1_000, policy);
      expect(await scanner.scan(input)).toEqual({ score: 2, verdict: 'ham', reject: false });
      answer = { score: 7, action: 'add header' };
      expect(await scanner.scan(input)).toEqual({ score: 7, verdict: 'spam', reject: false });
      answer = { score: 0, action: 'reject' };
      expect(await scanner.scan(input)).toEqual({ score: 0, verdict: 'spam', reject: true });
      answer = { score: 16, action: 'add header' };
      expect((await scanner.scan(input)).reject).toBe(true);
    } finally {
      s.close();
    }
  });

  it('says unscanned, never ham, when rspamd is down, slow, or answers nonsense', async () => {
    const down = await new SpamScanner('http://127.0.0.1:1', 500, policy).scan(input);
    expect(down).toMatchObject({ score: null, verdict: 'unscanned', reject: false });
    const { url, server: slow } = await server(() => undefined);
    try {
      expect(await new SpamScanner(url, 200, policy).scan(input)).toMatchObject({ verdict: 'unscanned' });
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
    const { url: u2, server: odd } = await server((_req, res) => res.end('{"nope":1}'));
    try {
      expect(await new SpamScanner(u2, 500, policy).scan(input)).toMatchObject({ verdict: 'unscanned', error: 'rspamd answer not understood' });
    } finally {
      odd.close();
    }
    expect(await new SpamScanner(null, 500, policy).scan(input)).toMatchObject({ verdict: 'unscanned' });
  });
});
