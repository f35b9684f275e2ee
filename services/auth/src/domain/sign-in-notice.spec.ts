/** The new-sign-in notice: which clients are new to an account, and the mail a sign-in from one queues. */
import { clockAt, MemoryOutbox } from '../../test/memory-credentials';
import { MemoryHistory, memorySignIns } from '../../test/memory-sign-ins';
import type { UserRow } from '../repo/user.repository';
import { familyOf, isNewClient, networkOf, NOTICE_LOOKBACK_MS, SignInNotices } from './sign-in-notice';

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const CHROME_MAC_NEXT = CHROME_MAC.replace('Chrome/120.0.0.0', 'Chrome/121.0.6167.85');
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const NO_TX = Object.create(null);

describe('what a client is', () => {
  it('names the family of a User-Agent without versions: browser and system, or the program', () => {
    expect(familyOf(CHROME_MAC)).toBe('Chrome on macOS');
    expect(familyOf(CHROME_MAC_NEXT)).toBe('Chrome on macOS');
    expect(familyOf(FIREFOX_LINUX)).toBe('Firefox on Linux');
    expect(familyOf(SAFARI_IPHONE)).toBe('Safari on iOS');
    expect(familyOf('curl/8.4.0')).toBe('curl');
    expect(familyOf('python-requests/2.31.0')).toBe('python-requests');
    expect([familyOf(null), familyOf('/// ???')]).toEqual(['an unknown client', 'an unknown client']);
  });

  it('takes the network of an address: IPv4 /24, IPv6 /64 (IPv4 mapped into IPv6 as IPv4)', () => {
    expect(networkOf('203.0.113.7')).toBe('203.0.113.0/24');
    expect(networkOf('::ffff:203.0.113.200')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect([networkOf(null), networkOf('not an address')]).toEqual([null, null]);
  });

  it('is new unless a recent session had the same family from the same network', () => {
    const seen = [
      { ip: '203.0.113.7', user_agent: CHROME_MAC },
      { ip: '2001:db8:1:2::5', user_agent: 'curl/8.4.0' },
    ];
    // The same client after a browser update, on another address of its network.
    expect(isNewClient({ ip: '203.0.113.99', user_agent: CHROME_MAC_NEXT }, seen)).toBe(false);
    expect(isNewClient({ ip: '2001:db8:1:2:1234::1', user_agent: 'curl/8.5.0' }, seen)).toBe(false);
    // Another network, another browser, or another program from a known network: new.
    expect(isNewClient({ ip: '198.51.100.7', user_agent: CHROME_MAC }, seen)).toBe(true);
    expect(isNewClient({ ip: '203.0.113.7', user_agent: FIREFOX_LINUX }, seen)).toBe(true);
    expect(isNewClient({ ip: '2001:db8:1:3::5', user_agent: 'curl/8.4.0' }, seen)).toBe(true);
    expect(isNewClient({ ip: null, user_agent: null }, [])).toBe(true);
    expect(isNewClient({ ip: null, user_agent: null }, [{ ip: null, user_agent: null }])).toBe(false);
  });
});

describe('SignInNotices', () => {
  const ada = { id: 'usr_ada', email: 'ada@example.com' };

  it('mails the time, address and User-Agent of a sign-in from a new client, and nothing for a client seen within 90 days', async () => {
    const clock = clockAt();
    const history = new MemoryHistory();
    const outbox = new MemoryOutbox();
    const notices = new SignInNotices(history, outbox);
    history.used.push({ user_id: ada.id, ip: '203.0.113.7', user_agent: CHROME_MAC, at: new Date(clock.now().getTime() - NOTICE_LOOKBACK_MS) });
    // Another person's sessions say nothing of Ada's clients.
    history.used.push({ user_id: 'usr_bob', ip: '198.51.100.7', user_agent: FIREFOX_LINUX, at: clock.now() });
    expect(await notices.queue(NO_TX, ada, { ip: '203.0.113.8', userAgent: CHROME_MAC }, 'password', clock.now())).toBe(false);
    expect(outbox.mails).toEqual([]);
    expect(await notices.queue(NO_TX, ada, { ip: '198.51.100.7', userAgent: ` ${FIREFOX_LINUX} ` }, 'password_and_mfa', clock.now())).toBe(true);
    expect(outbox.mails).toEqual([
      {
        id: expect.stringMatching(/^sml_/),
        to: ada.email,
        template: 'new_sign_in',
        data: { signed_in_at: clock.now().toISOString(), ip: '198.51.100.7', user_agent: FIREFOX_LINUX, client: 'Firefox on Linux', with: 'password_and_mfa' },
      },
    ]);
    // 90 days and a millisecond later, the first client is forgotten.
    clock.advance(1);
    expect(await notices.queue(NO_TX, ada, { ip: '203.0.113.8', userAgent: CHROME_MAC }, 'password', clock.now())).toBe(true);
  });

  it('is part of a sign-in: the first session from a client is noticed, the next ones not; the proof comes first', async () => {
    const clock = clockAt();
    const outbox = new MemoryOutbox();
    const { start, sessions } = memorySignIns(clock, outbox);
    const row: UserRow = { ...ada, password_hash: null, name: null, email_verified_at: null, created_at: clock.now(), updated_at: clock.now(), deleted_at: null };
    const laptop = { ip: '203.0.113.7', userAgent: CHROME_MAC };
    const first = await start.signIn(row, laptop, 'password');
    expect(first).toMatchObject({ user: { id: ada.id }, access_token: `at:${sessions[0]!.id}`, refresh_token: expect.stringMatching(/^mrt_/) });
    expect(outbox.mails.map((m) => m.template)).toEqual(['new_sign_in']);
    expect(outbox.kicks).toBe(1);
    clock.advance(60_000);
    await start.signIn(row, laptop, 'password');
    expect([outbox.mails.length, outbox.kicks, sessions.length]).toEqual([1, 1, 2]);
    // A proof that fails: no session, no notice.
    await expect(start.signIn(row, { ip: '198.51.100.7', userAgent: FIREFOX_LINUX }, 'password_and_mfa', async () => Promise.reject(new Error('wrong code')))).rejects.toThrow('wrong code');
    expect([outbox.mails.length, sessions.length]).toEqual([1, 2]);
  });
});
