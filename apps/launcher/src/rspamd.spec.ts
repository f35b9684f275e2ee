import { configuration, layout } from './rspamd';

describe('rspamd', () => {
  it('finds the stock configuration of a system install and of an unpacked package', () => {
    expect(layout('/usr/bin/rspamd')).toEqual({ bin: '/usr/bin/rspamd', confDir: '/etc/rspamd', shareDir: '/usr/share/rspamd' });
    expect(layout('/p/.data/debian/usr/bin/rspamd')).toEqual({ bin: '/p/.data/debian/usr/bin/rspamd', confDir: '/p/.data/debian/etc/rspamd', shareDir: '/p/.data/debian/usr/share/rspamd' });
    expect(layout('/opt/homebrew/bin/rspamd')).toMatchObject({ confDir: '/opt/homebrew/etc/rspamd', shareDir: '/opt/homebrew/share/rspamd' });
  });

  it('runs one scanning worker on the port given, and no controller or proxy', () => {
    const conf = configuration(21333);
    expect(conf).toContain('bind_socket = "127.0.0.1:21333";');
    expect(conf.match(/^worker /gm)).toEqual(['worker ']);
  });
});
