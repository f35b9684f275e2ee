import { Batched } from './batch';

/** A statement that records the batches it ran and answers when told to. */
function statement(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const pending: (() => void)[] = [];
  let hold = false;
  const run = async (items: number[]): Promise<string[]> => {
    batches.push(items);
    if (hold) await new Promise<void>((r) => pending.push(r));
    if (items.some(fail)) throw new Error(`refused ${items.join(',')}`);
    return items.map((i) => `r${i}`);
  };
  return {
    run,
    batches,
    hold: () => void (hold = true),
    release: () => {
      hold = false;
      pending.splice(0).forEach((r) => r());
    },
  };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
};

describe('Batched', () => {
  it('runs the calls of one turn as one batch and answers each with its own result', async () => {
    const s = statement();
    const b = new Batched(s.run);
    expect(await Promise.all([b.call(1), b.call(2), b.call(3)])).toEqual(['r1', 'r2', 'r3']);
    expect(s.batches).toEqual([[1, 2, 3]]);
  });

  it('runs a lone call alone, and calls made while a batch runs together in the next one', async () => {
    const s = statement();
    const b = new Batched(s.run);
    s.hold();
    const first = b.call(1);
    await until(() => s.batches.length === 1);
    const later = [b.call(2), b.call(3)];
    await new Promise((r) => setImmediate(r));
    expect(s.batches).toEqual([[1]]); // one batch at a time
    s.release();
    expect(await Promise.all([first, ...later])).toEqual(['r1', 'r2', 'r3']);
    expect(s.batches).toEqual([[1], [2, 3]]);
  });

  it('splits at the maximum size', async () => {
    const s = statement();
    const b = new Batched(s.run, { max: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((i) => b.call(i)));
    expect(s.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('when a batch fails, runs its items alone so only the refused one fails', async () => {
    const s = statement((i) => i === 2);
    const b = new Batched(s.run);
    const results = await Promise.allSettled([b.call(1), b.call(2), b.call(3)]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['r1', 'refused 2', 'r3']);
    expect(s.batches).toEqual([[1, 2, 3], [1], [2], [3]]);
    // And it goes on batching after.
    expect(await Promise.all([b.call(4), b.call(5)])).toEqual(['r4', 'r5']);
  });

  it('refuses a statement that answers for fewer items than it was given', async () => {
    const b = new Batched<number, number>(async (items) => items.slice(1));
    await expect(b.call(1)).rejects.toThrow('returned 0 results for 1 items');
  });
});
