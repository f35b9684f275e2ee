import { ManualClock } from '@mailroom/platform';
import type { HealthReport } from '@mailroom/contracts';
import { HealthHistory, isChange, slotOf, type SampleStore } from './health-history';

describe('health history', () => {
  it('puts a round in the slot of its interval, and marks the first sample and every change of status', () => {
    expect(slotOf(new Date('2026-11-30T12:00:59.999Z'), 60_000).toISOString()).toBe('2026-11-30T12:00:00.000Z');
    expect(isChange(undefined, 'ok')).toBe(true);
    expect(isChange('ok', 'ok')).toBe(false);
    expect(isChange('ok', 'degraded')).toBe(true);
  });

  it('refuses a range that is backwards or wider than 31 days, and a foreign page token', async () => {
    const clock = new ManualClock(new Date('2026-11-30T12:00:00.000Z'));
    const list = jest.fn(async () => []);
    const history = new HealthHistory({ list } as unknown as SampleStore, async () => Promise.reject(new Error('unused')), clock, { intervalMs: 60_000, retentionDays: 30 });
    await expect(history.query({ from: '2026-10-01T00:00:00.000Z', to: '2026-11-30T00:00:00.000Z', limit: 10 })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(history.query({ from: '2026-12-01T00:00:00.000Z', limit: 10 })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(history.query({ limit: 10, page_token: 'bogus' })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await history.query({ limit: 10 })).toEqual({ data: [], next_page_token: null });
    expect(list).toHaveBeenCalledWith({ from: new Date('2026-11-29T12:00:00.000Z'), to: new Date('2026-11-30T12:00:00.000Z'), after: undefined, changesOnly: false, limit: 11 });
  });
});

describe('a sampling round', () => {
  const report = (status: HealthReport['status']) => ({ status, reasons: [], checked_at: '2026-11-30T12:00:30.000Z' }) as unknown as HealthReport;

  function store(claims: boolean, latest: string | undefined) {
    const calls: string[] = [];
    const inserted: unknown[] = [];
    const repo = {
      claimRound: async (slot: Date) => (calls.push(`claim ${slot.toISOString()}`), claims),
      latestStatus: async () => latest,
      insert: async (row: unknown) => void inserted.push(row),
      list: async () => [],
      purgeSamples: async (before: Date) => (calls.push(`purge samples ${before.toISOString()}`), 0),
      purgeRounds: async (before: Date) => void calls.push(`purge rounds ${before.toISOString()}`),
    } satisfies SampleStore;
    return { repo, calls, inserted };
  }

  it('takes the sample of its interval once claimed, marks a change of status, hands it on, then purges past the retention', async () => {
    const clock = new ManualClock(new Date('2026-11-30T12:00:30.000Z'));
    const s = store(true, 'ok');
    const after = jest.fn(async () => undefined);
    await new HealthHistory(s.repo, async () => report('degraded'), clock, { intervalMs: 60_000, retentionDays: 30 }).round(after);
    expect(s.inserted).toEqual([expect.objectContaining({ id: expect.stringMatching(/^hsm_/), status: 'degraded', previous_status: 'ok', status_changed: true })]);
    expect(after).toHaveBeenCalledTimes(1);
    expect(s.calls).toEqual(['claim 2026-11-30T12:00:00.000Z', 'purge samples 2026-10-31T12:00:30.000Z', 'purge rounds 2026-10-31T12:00:30.000Z']);
  });

  it('does nothing when another instance claimed the interval', async () => {
    const s = store(false, 'ok');
    const check = jest.fn(async () => report('ok'));
    expect(await new HealthHistory(s.repo, check, new ManualClock(), { intervalMs: 60_000, retentionDays: 30 }).round()).toBeUndefined();
    expect(check).not.toHaveBeenCalled();
    expect(s.inserted).toEqual([]);
  });
});

