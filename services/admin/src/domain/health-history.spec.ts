import { ManualClock } from '@mailroom/platform';
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
