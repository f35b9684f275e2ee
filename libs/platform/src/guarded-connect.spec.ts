import type { LookupAddress } from 'node:dns';
import { BlockedDestinationError, guardedLookup, isBlocked } from './guarded-connect';
import { IpPolicy } from './ip-policy';

/** What the hook answers for a name, as net.connect would ask (options: family, all). */
function lookup(ips: IpPolicy, answers: LookupAddress[], options: { family?: number; all?: boolean } = {}): Promise<{ err: Error | null; result: unknown }> {
  return new Promise((resolve) => {
    guardedLookup(ips, async () => answers)('name.test', options as never, ((err: Error | null, address: unknown, family?: number) =>
      resolve({ err, result: options.all ? address : { address, family } })) as never);
  });
}

describe('the connect-time lookup of the SSRF guard', () => {
  const publicV4 = { address: '93.184.216.34', family: 4 };
  const loopback = { address: '127.0.0.1', family: 4 };
  const publicV6 = { address: '2606:2800:220:1::1', family: 6 };

  it('answers with permitted addresses only, all of them when asked for all', async () => {
    expect(await lookup(new IpPolicy(), [loopback, publicV4])).toEqual({ err: null, result: publicV4 });
    expect(await lookup(new IpPolicy(), [loopback, publicV4, publicV6], { all: true })).toEqual({ err: null, result: [publicV4, publicV6] });
    expect(await lookup(new IpPolicy(), [publicV4, publicV6], { family: 6 })).toEqual({ err: null, result: publicV6 });
    expect(await lookup(new IpPolicy(['127.0.0.1/32']), [loopback])).toEqual({ err: null, result: loopback });
  });

  it('refuses a name with only non-public addresses as blocked, and one with none (of the family) as not found', async () => {
    const blocked = await lookup(new IpPolicy(), [loopback, { address: '10.0.0.1', family: 4 }]);
    expect(blocked.err).toBeInstanceOf(BlockedDestinationError);
    expect(isBlocked(new Error('fetch failed', { cause: blocked.err }))).toBe(true);
    const none = await lookup(new IpPolicy(), [publicV4], { family: 6 });
    expect([none.err?.message, (none.err as { code?: string } | null)?.code]).toEqual(['no address for name.test', 'ENOTFOUND']);
    expect(isBlocked(none.err)).toBe(false);
  });
});
