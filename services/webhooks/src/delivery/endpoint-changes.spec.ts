import { CHANGE_MEMORY_MS, EndpointChanges } from './endpoint-changes';
import type { RecordedEndpoint } from '../repo/delivery.repository';

const url = 'https://hooks.example.com/in';
const row = (id: string, over: Partial<RecordedEndpoint> = {}): RecordedEndpoint => ({ id, url, disabled: false, disabledNow: false, consecutiveFailures: 0, ...over });
const none = () => new Map<string, boolean[]>();

describe('endpoint changes', () => {
  let t = 0;
  const changes = () => new EndpointChanges(() => t);
  beforeEach(() => (t = 100));

  it('a change made here applies to deliveries read before it, not after', () => {
    const c = changes();
    c.madeHere('e1', { url: 'https://new.example.com/', disabled: false, consecutiveFailures: 0 });
    expect(c.since('e1', 99)?.now?.url).toBe('https://new.example.com/');
    expect(c.since('e1', 101)).toBeUndefined();
    expect(c.since('e2', 0)).toBeUndefined();
  });

  it("a record's read becomes the view followed, its count going on from what is not yet recorded", async () => {
    const c = changes();
    const follows = await c.afterRecord(['e1', 'gone'], [row('e1', { consecutiveFailures: 2 })], 50, () => Promise.reject(new Error('not asked')), () => new Map([['e1', [false, false]]]));
    expect(follows).toEqual([
      { id: 'e1', now: { url, disabled: false, consecutiveFailures: 4 } },
      { id: 'gone', now: undefined },
    ]);
    // Deleted: remembered, so deliveries read before now follow it.
    expect(c.since('gone', 99)).toEqual({ at: 100, now: undefined });
  });

  it('an endpoint changed here while the record ran is read again; if that fails, the change made here stands', async () => {
    const c = changes();
    c.madeHere('e1', { url: 'https://new.example.com/', disabled: false, consecutiveFailures: 0 });
    t = 110;
    const again = await c.afterRecord(['e1'], [row('e1')], 50, async () => [row('e1', { url: 'https://new.example.com/' })], none);
    expect(again).toEqual([{ id: 'e1', now: { url: 'https://new.example.com/', disabled: false, consecutiveFailures: 0 } }]);
    expect(await c.afterRecord(['e1'], [row('e1')], 50, () => Promise.reject(new Error('down')), none)).toEqual([]);
  });

  it('found disabled, it is remembered for deliveries read before; changes are forgotten after CHANGE_MEMORY_MS', async () => {
    const c = changes();
    await c.afterRecord(['e1'], [row('e1', { disabled: true })], 50, () => Promise.reject(new Error('not asked')), none);
    expect(c.since('e1', 99)?.now?.disabled).toBe(true);
    t += CHANGE_MEMORY_MS + 1;
    c.forgetOld();
    expect(c.since('e1', 0)).toBeUndefined();
  });
});
