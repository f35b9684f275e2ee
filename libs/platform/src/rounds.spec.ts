/** Rounds one at a time: kicks during a round make one more, a round with more to do is followed at once, stop waits. */
import { Rounds } from './rounds';

/** A round the test finishes by hand: `more` is what it answers. */
function manual() {
  const pending: ((more: boolean) => void)[] = [];
  let started = 0;
  const round = () => {
    started++;
    return new Promise<boolean>((resolve) => pending.push(resolve));
  };
  const finish = async (more = false) => {
    pending.shift()!(more);
    // Let the round's settling and the next kick run.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { round, finish, started: () => started, pending };
}

describe('Rounds', () => {
  it('runs one round at a time: kicks meanwhile make exactly one more', async () => {
    const m = manual();
    const rounds = new Rounds(m.round, () => undefined, 60_000);
    rounds.kick();
    rounds.kick();
    rounds.kick();
    expect(m.started()).toBe(1);
    await m.finish();
    expect(m.started()).toBe(2);
    await m.finish();
    expect(m.started()).toBe(2);
    await rounds.stop();
  });

  it('follows a round that has more to do with another, at once', async () => {
    const m = manual();
    const rounds = new Rounds(m.round, () => undefined, 60_000);
    rounds.kick();
    await m.finish(true);
    expect(m.started()).toBe(2);
    await m.finish(false);
    expect(m.started()).toBe(2);
    await rounds.stop();
  });

  it('hands a failed round to onError and runs the next one when kicked', async () => {
    const m = manual();
    const errors: unknown[] = [];
    let failed = false;
    const rounds = new Rounds(() => (failed ? m.round() : ((failed = true), Promise.reject(new Error('down')))), (err) => errors.push(err), 60_000);
    rounds.kick();
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([new Error('down')]);
    rounds.kick();
    expect(m.started()).toBe(1);
    await m.finish();
    await rounds.stop();
  });

  it('waits, at stop, for the round under way, and starts none after', async () => {
    const m = manual();
    const rounds = new Rounds(m.round, () => undefined, 60_000);
    rounds.kick();
    rounds.kick();
    let stopped = false;
    const stopping = rounds.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    await m.finish();
    await stopping;
    expect(stopped).toBe(true);
    rounds.kick();
    expect(m.started()).toBe(1);
  });
});
