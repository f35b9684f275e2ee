import { Resolver } from 'node:dns/promises';
import { startDnsServer, type DnsServer } from './dns-server';

const LONG_TEXT = `v=DKIM1; k=rsa; p=${'A'.repeat(600)}`;

describe('startDnsServer', () => {
  let server: DnsServer;
  let resolver: Resolver;

  beforeAll(async () => {
    server = await startDnsServer(
      [
        { name: 'mail.example.test', type: 'A', address: '192.0.2.10' },
        { name: 'mail.example.test', type: 'AAAA', address: '2001:db8::10' },
        { name: 'example.test', type: 'MX', preference: 10, exchange: 'mail.example.test' },
        { name: 'example.test', type: 'MX', preference: 20, exchange: 'backup.example.test' },
        { name: 'example.test', type: 'TXT', text: ['v=spf1 ', 'ip4:192.0.2.0/24 -all'] },
        { name: 'example.test', type: 'NS', target: 'ns1.example.test' },
        {
          name: 'example.test',
          type: 'SOA',
          soa: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 7, minimum: 0 },
        },
        { name: 'sel._domainkey.example.test', type: 'TXT', text: LONG_TEXT },
        { name: 'www.example.test', type: 'CNAME', target: 'mail.example.test.' },
        { name: '10.2.0.192.in-addr.arpa', type: 'PTR', target: 'mail.example.test' },
        // 12 records of 400 bytes: more than any UDP answer c-ares accepts, so only TCP delivers them.
        ...Array.from({ length: 12 }, (_, i) => ({ name: 'big.example.test', type: 'TXT' as const, text: `${i}:${'x'.repeat(400)}` })),
        { name: 'broken.example.test', type: 'A', address: '192.0.2.66' },
      ],
      {
        faults: [
          { name: 'broken.example.test', servfail: true },
          { name: 'half.example.test', types: ['TXT'], servfail: true },
          { name: 'slow.example.test', delayMs: 5_000 },
        ],
      },
    );
    server.add({ name: 'half.example.test', type: 'A', address: '192.0.2.77' });
    // 1 s: room for an answer on a busy CI machine (200 ms was not), still well short of slow.example.test's 5 s.
    resolver = new Resolver({ timeout: 1_000, tries: 1 });
    resolver.setServers([server.servers]);
  });

  afterAll(() => server.close());

  it('listens on loopback and names itself as a resolver server', () => {
    expect(server.servers).toBe(`127.0.0.1:${server.port}`);
  });

  it('answers A and AAAA, whatever the case of the name', async () => {
    expect(await resolver.resolve4('MAIL.Example.TEST')).toEqual(['192.0.2.10']);
    expect(await resolver.resolve6('mail.example.test')).toEqual(['2001:db8::10']);
  });

  it('keeps the strings of a TXT record apart and splits a long one into 255-byte strings', async () => {
    expect(await resolver.resolveTxt('example.test')).toEqual([['v=spf1 ', 'ip4:192.0.2.0/24 -all']]);
    const [record] = await resolver.resolveTxt('sel._domainkey.example.test');
    expect(record?.map((s) => s.length)).toEqual([255, 255, LONG_TEXT.length - 510]);
    expect(record?.join('')).toBe(LONG_TEXT);
  });

  it('answers MX, NS, SOA and PTR', async () => {
    const mx = await resolver.resolveMx('example.test');
    expect(mx.map(({ exchange, priority }) => ({ exchange, priority })).sort((a, b) => a.priority - b.priority)).toEqual([
      { exchange: 'mail.example.test', priority: 10 },
      { exchange: 'backup.example.test', priority: 20 },
    ]);
    expect(await resolver.resolveNs('example.test')).toEqual(['ns1.example.test']);
    expect(await resolver.resolveSoa('example.test')).toMatchObject({ nsname: 'ns1.example.test', serial: 7 });
    expect(await resolver.reverse('192.0.2.10')).toEqual(['mail.example.test']);
  });

  it('follows a CNAME to the records of its target', async () => {
    expect(await resolver.resolve4('www.example.test')).toEqual(['192.0.2.10']);
    expect(await resolver.resolveCname('www.example.test')).toEqual(['mail.example.test']);
  });

  it('falls back to TCP for an answer too large for UDP', async () => {
    const records = await resolver.resolveTxt('big.example.test');
    expect(records).toHaveLength(12);
    expect(records.map((r) => r.join('').split(':')[0]).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 12 }, (_, i) => String(i)),
    );
  });

  it('answers NXDOMAIN for an unknown name and NODATA for a type the name lacks', async () => {
    await expect(resolver.resolve4('nowhere.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolveMx('mail.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('answers SERVFAIL for a failing name, or only for the types given', async () => {
    await expect(resolver.resolve4('broken.example.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    await expect(resolver.resolveTxt('half.example.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    expect(await resolver.resolve4('half.example.test')).toEqual(['192.0.2.77']);
  });

  it('answers a delayed name too late for a short client timeout', async () => {
    await expect(resolver.resolve4('slow.example.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('serves set() and add() changes at once', async () => {
    const scratch = await startDnsServer([{ name: 'a.example.test', type: 'A', address: '192.0.2.1' }]);
    try {
      const own = new Resolver({ timeout: 1_000, tries: 1 });
      own.setServers([scratch.servers]);
      expect(await own.resolve4('a.example.test')).toEqual(['192.0.2.1']);
      scratch.set([{ name: 'a.example.test', type: 'A', address: '192.0.2.2' }]);
      scratch.add({ name: 'a.example.test', type: 'A', address: '192.0.2.3' });
      expect((await own.resolve4('a.example.test')).sort()).toEqual(['192.0.2.2', '192.0.2.3']);
    } finally {
      await scratch.close();
    }
  });
});
