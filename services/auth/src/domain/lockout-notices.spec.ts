/** The lock-out notice without a database: only an account gets it, and nothing is looked up before the answer. */
import { clockAt, MemoryCredentials, MemoryOutbox, memoryTransact } from '../../test/memory-credentials';
import { LockoutNotices } from './lockout-notices';

describe('LockoutNotices', () => {
  it('looks the email up after the answer and mails the account, never an address without one', async () => {
    const lookups: string[] = [];
    class Watched extends MemoryCredentials {
      override findLiveByEmail(email: string) {
        lookups.push(email);
        return super.findLiveByEmail(email);
      }
    }
    const store = new Watched();
    store.addUser('usr_ada', 'ada@example.com');
    const outbox = new MemoryOutbox();
    const errors: unknown[] = [];
    const notices = new LockoutNotices(memoryTransact, store, outbox, { onError: (err) => errors.push(err), onDropped: () => undefined });
    const now = clockAt().now();
    const until = new Date(now.getTime() + 900_000);
    notices.lockedOut({ kind: 'login', identifier: 'ada@example.com', failures: 10, lockedAt: now, lockedUntil: until });
    notices.lockedOut({ kind: 'login', identifier: 'nobody@example.com', failures: 10, lockedAt: now, lockedUntil: until });
    expect(lookups).toEqual([]);
    await notices.settled();
    expect(lookups.sort()).toEqual(['ada@example.com', 'nobody@example.com']);
    expect(outbox.mails).toEqual([
      { id: expect.stringMatching(/^sml_/), to: 'ada@example.com', template: 'account_locked', data: { attempt: 'login', failures: 10, locked_at: now.toISOString(), locked_until: until.toISOString() } },
    ]);
    expect([outbox.kicks, errors]).toEqual([1, []]);
  });
});
