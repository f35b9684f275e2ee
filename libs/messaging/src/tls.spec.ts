import { busTlsOption } from './tls';

describe('busTlsOption', () => {
  it('leaves TLS to the server for nats:// URLs without files', () => {
    expect(busTlsOption(['nats://a:4222', 'b:4222'], undefined)).toEqual({});
  });

  it('requires TLS for a tls:// URL, whatever its case or position in the list', () => {
    expect(busTlsOption('tls://nats:4222', undefined)).toEqual({ tls: {} });
    expect(busTlsOption(['nats://a:4222', ' TLS://b:4222'], undefined)).toEqual({ tls: {} });
  });

  it('passes the files given, which require TLS even with a nats:// URL', () => {
    expect(busTlsOption('nats://nats:4222', { caFile: '/ca.crt' })).toEqual({ tls: { caFile: '/ca.crt' } });
    expect(busTlsOption('tls://nats:4222', { caFile: '/ca.crt', certFile: '/c.crt', keyFile: '/c.key' })).toEqual({
      tls: { caFile: '/ca.crt', certFile: '/c.crt', keyFile: '/c.key' },
    });
  });
});
