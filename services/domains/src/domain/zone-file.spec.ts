import type { Domain } from '@mailroom/contracts';
import { recordsOf } from './records';
import { quoteTxt, zoneFileOf } from './zone-file';

describe('the zone file', () => {
  it('quotes TXT text in strings of at most 255 bytes, escaping quotes and backslashes', () => {
    expect(quoteTxt('v=spf1 -all')).toBe('"v=spf1 -all"');
    expect(quoteTxt('a"b\\c')).toBe('"a\\"b\\\\c"');
    const long = quoteTxt('x'.repeat(600));
    expect(long).toBe(`"${'x'.repeat(255)}" "${'x'.repeat(255)}" "${'x'.repeat(90)}"`);
  });

  it('writes every record fully qualified, with its TTL and class', () => {
    const key = 'K'.repeat(392);
    const records = recordsOf({ name: 'example.com', dkimSelector: 'mrabcdefgh', dkimPublicKey: key }, { mxHost: 'mx.mailroom.test', spfInclude: 'spf.mailroom.test', dmarcRua: null, bounceTarget: 'bounces.mailroom.test' }, {});
    const domain = { domain_id: 'dom_01jd0000000000000000000000', domain_name: 'example.com', records } as Domain;
    const lines = zoneFileOf(domain).split('\n').filter((l) => l && !l.startsWith(';'));
    expect(lines).toEqual([
      'example.com.\t3600\tIN\tMX\t10 mx.mailroom.test.',
      'example.com.\t3600\tIN\tTXT\t"v=spf1 include:spf.mailroom.test ~all"',
      `mrabcdefgh._domainkey.example.com.\t3600\tIN\tTXT\t"v=DKIM1; k=rsa; p=${key.slice(0, 255 - 18)}" "${key.slice(255 - 18)}"`,
      '_dmarc.example.com.\t3600\tIN\tTXT\t"v=DMARC1; p=none"',
      'bounces.example.com.\t3600\tIN\tCNAME\tbounces.mailroom.test.',
    ]);
  });
});
