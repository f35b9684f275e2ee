import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RspamdScanner } from './rspamd';

const input = { raw: Buffer.from('Subject: x\r\n\r\nhi\r\n'), ip: '192.0.2.1', helo: 'h', mailFrom: 'a@b.c', recipients: ['x@y.z'], queueId: 'raw_1' };
const policy = { spamScore: 6, rejectScore: 15 };

function server(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const s = createServer(handler);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, server: s })));
}

describe('RspamdScanner', () => {
  const scanners: RspamdScanner[] = [];
  const scanner = (url: string | null, timeoutMs: number) => {
    const s = new RspamdScanner(url, timeoutMs, policy);
    scanners.push(s);
    return s;
  };
  afterAll(() => Promise.all(scanners.map((s) => s.close())));

  it('maps rspamd scores and actions to verdicts', async () => {
    let answer = { score: 2, action: 'no action' };
    const { url, server: s } = await server((_req, res) => res.end(JSON.stringify(answer)));
    try {
      const rspamd = scanner(url, 1_000);
      expect(await rspamd.scan(input)).toEqual({ score: 2, verdict: 'ham', reject: false });
      answer = { score: 7, action: 'add header' };
      expect(await rspamd.scan(input)).toEqual({ score: 7, verdict: 'spam', reject: false });
      answer = { score: 0, action: 'reject' };
      expect(await rspamd.scan(input)).toEqual({ score: 0, verdict: 'spam', reject: true });
      answer = { score: 16, action: 'add header' };
      expect((await rspamd.scan(input)).reject).toBe(true);
    } finally {
      s.close();
    }
  });

  it('says unscanned, never ham, when rspamd is down, slow, or answers nonsense', async () => {
    const down = await scanner('http://127.0.0.1:1', 500).scan(input);
    expect(down).toMatchObject({ score: null, verdict: 'unscanned', reject: false });
    const { url, server: slow } = await server(() => undefined);
    try {
      expect(await scanner(url, 200).scan(input)).toMatchObject({ verdict: 'unscanned' });
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
    const { url: u2, server: odd } = await server((_req, res) => res.end('{"nope":1}'));
    try {
      expect(await scanner(u2, 500).scan(input)).toMatchObject({ verdict: 'unscanned', error: 'rspamd answer not understood' });
    } finally {
      odd.close();
    }
    const { url: u3, server: failing } = await server((req, res) => {
      res.statusCode = req.headers.ip === '192.0.2.1' ? 500 : 200;
      res.end(res.statusCode === 500 ? 'internal error' : 'not json');
    });
    try {
      const rspamd = scanner(u3, 500);
      expect(await rspamd.scan(input)).toMatchObject({ verdict: 'unscanned', error: 'rspamd answered HTTP 500' });
      // The connection is still usable after an error answer, and broken JSON is unscanned too.
      expect(await rspamd.scan({ ...input, ip: '192.0.2.2' })).toMatchObject({ score: null, verdict: 'unscanned', reject: false });
    } finally {
      failing.closeAllConnections();
      failing.close();
    }
    expect(await scanner(null, 500).scan(input)).toMatchObject({ verdict: 'unscanned' });
  });
});
