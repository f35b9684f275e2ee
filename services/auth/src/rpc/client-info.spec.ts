import { clientInfo } from './client-info';

describe('clientInfo', () => {
  it('keeps IP addresses, writes mapped IPv4 as IPv4, and drops what is not an address', () => {
    expect(clientInfo({ ip: '192.0.2.1', userAgent: 'curl/8' })).toEqual({ ip: '192.0.2.1', userAgent: 'curl/8' });
    expect(clientInfo({ ip: '2001:db8::1' }).ip).toBe('2001:db8::1');
    expect(clientInfo({ ip: '::ffff:192.0.2.1' }).ip).toBe('192.0.2.1');
    expect(clientInfo({ ip: '::FFFF:192.0.2.1' }).ip).toBe('192.0.2.1');
    expect(clientInfo({ ip: '::ffff:c000:201' }).ip).toBe('::ffff:c000:201');
    for (const junk of ['unknown', '<script>', '1.2.3', '192.0.2.1, 198.51.100.1', '']) expect(clientInfo({ ip: junk }).ip).toBeUndefined();
    expect(clientInfo(undefined)).toEqual({ ip: undefined, userAgent: undefined });
  });
});
