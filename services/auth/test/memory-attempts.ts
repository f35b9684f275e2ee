/**
 * The brute-force guard's store without a database, with the repository's semantics (a row
 * per kind and identifier hash; `lock` needs the row `ensure` made), and a guard on it that
 * records the lock-outs it tells of. Its transactions run one at a time, as the row lock makes
 * those of one identifier: work done outside the transaction would race, and the specs see it.
 */
import { DEVELOPMENT_ENCRYPTION_KEY, type Clock } from '@mailroom/platform';
import { AttemptGuard, IdentifierHasher, type Attempts, type Lockout } from '../src/domain/attempt-guard';
import { DEFAULT_ATTEMPT_POLICY, type AttemptPolicy } from '../src/domain/attempt-limits';
import type { AttemptKey, AttemptRow } from '../src/repo/attempt.repository';
import type { Transact } from '../src/domain/ports';
import type { AuthTx } from '../src/repo/tables';

const id = (key: AttemptKey) => `${key.kind}:${key.identifier_hash.toString('hex')}`;

export class MemoryAttempts implements Attempts {
  readonly rows = new Map<string, AttemptRow>();

  async ensure(empty: AttemptRow): Promise<void> {
    if (!this.rows.has(id(empty))) this.rows.set(id(empty), { ...empty });
  }
  async lock(key: AttemptKey) {
    const row = this.rows.get(id(key));
    return row && { ...row };
  }
  async save(row: AttemptRow): Promise<void> {
    if (this.rows.has(id(row))) this.rows.set(id(row), { ...row });
  }
  async remove(key: AttemptKey): Promise<void> {
    this.rows.delete(id(key));
  }
  async removeForgotten(now: Date): Promise<number> {
    const gone = [...this.rows].filter(([, r]) => r.forget_at <= now);
    for (const [key] of gone) this.rows.delete(key);
    return gone.length;
  }
}

/** Transactions in turn (the stand-in store ignores the transaction object). */
function serialTransact(): Transact {
  let last: Promise<unknown> = Promise.resolve();
  return (work) => {
    const run = last.then(() => work(Object.create(null) as AuthTx));
    last = run.catch(() => undefined);
    return run;
  };
}

export function memoryGuard(clock: Clock, policy: AttemptPolicy = DEFAULT_ATTEMPT_POLICY) {
  const store = new MemoryAttempts();
  const lockouts: Lockout[] = [];
  const guard = new AttemptGuard(serialTransact(), store, new IdentifierHasher(DEVELOPMENT_ENCRYPTION_KEY), clock, policy, { lockedOut: (l) => void lockouts.push(l) });
  return { guard, store, lockouts };
}
