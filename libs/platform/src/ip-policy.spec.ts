import { IpPolicy, ipLiteralOf, parseCidr } from './ip-policy';

describe('IpPolicy', () => {
  const guard = new IpPolicy();

  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '::',
    '::1',
    '[::1]',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::1',
    '2001:db8::1',
    '::127.0.0.1',
    '100::1',
    'not-an-ip',
    '',
  ])('refuses %s', (address) => {
    expect(guard.permits(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1'])(
    'permits public %s',
    (address) => {
      expect(guard.permits(address)).toBe(true);
    },
  );

  it('allows configured ranges, also through their IPv4-mapped form', () => {
    const dev = new IpPolicy(['127.0.0.1/32', '::1', '10.1.0.0/16']);
    expect(dev.permits('127.0.0.1')).toBe(true);
    expect(dev.permits('::ffff:127.0.0.1')).toBe(true);
    expect(dev.permits('::1')).toBe(true);
    expect(dev.permits('10.1.2.3')).toBe(true);
    expect(dev.permits('127.0.0.2')).toBe(false);
    expect(dev.permits('10.2.0.1')).toBe(false);
    expect(dev.permits('169.254.169.254')).toBe(false);
  });

  it('parses CIDRs strictly', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ family: 4, bits: 8 });
    expect(parseCidr('fc00::/7')).toMatchObject({ family: 6, bits: 7 });
    for (const bad of ['10.0.0.0/33', '10.0.0/8', 'x/8', '10.0.0.0/8/1', '::/129', '10.0.0.0/-1']) expect(parseCidr(bad)).toBeUndefined();
    expect(() => new IpPolicy(['nonsense'])).toThrow(/CIDR/);
  });

  it('recognises IP literals in URL hostnames', () => {
    expect(ipLiteralOf('[::1]')).toBe('::1');
    expect(ipLiteralOf('127.0.0.1')).toBe('127.0.0.1');
    expect(ipLiteralOf('example.com')).toBeUndefined();
    expect(ipLiteralOf(new URL('http://2130706433/').hostname)).toBe('127.0.0.1');
    expect(ipLiteralOf(new URL('http://[::ffff:127.0.0.1]/').hostname)).toBe('::ffff:7f00:1');
  });
});
