import type { EventEnvelope } from '@mailroom/contracts';
import { RollupBatcher } from './events.consumer';

const event = (id: string) => ({ id }) as unknown as EventEnvelope;

describe('RollupBatcher', () => {
  it('writes what arrives during a write together in the next one, and settles each with its batch', async () => {
    const writes: string[][] = [];
    let release!: () => void;
    const first = new Promise<void>((r) => (release = r));
    let calls = 0;
    const batcher = new RollupBatcher({
      record: async (events) => {
        writes.push(events.map((e) => e.id));
        if (++calls === 1) await first;
        if (calls === 2) throw new Error('database down');
        return events.length;
      },
    });
    const a = batcher.add(event('evt_a'));
    const b = batcher.add(event('evt_b'));
    const c = batcher.add(event('evt_c'));
    release();
    await expect(a).resolves.toBeUndefined();
    await expect(b).rejects.toThrow('database down');
    await expect(c).rejects.toThrow('database down');
    expect(writes).toEqual([['evt_a'], ['evt_b', 'evt_c']]);
    await expect(batcher.add(event('evt_d'))).resolves.toBeUndefined();
  });
});
