import { AppError } from '@mailroom/contracts';
import { hoursOf, previousRange, resolveRange } from './range';

const now = new Date('2026-11-20T10:25:00.000Z');
const last24 = { kind: 'last_hours', hours: 24 } as const;
const iso = (r: { from: Date; to: Date }) => [r.from.toISOString(), r.to.toISOString()];

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('metrics ranges', () => {
  it('defaults to the last 24 hours, the current hour included', () => {
    expect(iso(resolveRange({}, now, last24))).toEqual(['2026-11-19T11:00:00.000Z', '2026-11-20T11:00:00.000Z']);
  });

  it('defaults the summary to this month so far', () => {
    expect(iso(resolveRange({}, now, { kind: 'this_month' }))).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-20T11:00:00.000Z']);
  });

  it('rounds from down and to up to hours, offsets taken into account', () => {
    expect(iso(resolveRange({ from: '2026-11-20T03:30:00+02:00', to: '2026-11-20T05:00:00.001Z' }, now, last24))).toEqual(['2026-11-20T01:00:00.000Z', '2026-11-20T06:00:00.000Z']);
  });

  it('cuts an end in the future at the current hour', () => {
    expect(iso(resolveRange({ from: '2026-11-20T00:00:00Z', to: '2026-12-01T00:00:00Z' }, now, last24))).toEqual(['2026-11-20T00:00:00.000Z', '2026-11-20T11:00:00.000Z']);
  });

  it('takes the default length before a lone to', () => {
    expect(iso(resolveRange({ to: '2026-11-10T00:00:00Z' }, now, last24))).toEqual(['2026-11-09T00:00:00.000Z', '2026-11-10T00:00:00.000Z']);
  });

  it('refuses reversed, empty, too long and future ranges with the field named', () => {
    expect(refusal(() => resolveRange({ from: '2026-11-20T05:00:00Z', to: '2026-11-20T01:00:00Z' }, now, last24)).details).toEqual([{ path: 'query.to', message: expect.stringContaining('after from') }]);
    expect(refusal(() => resolveRange({ from: '2026-11-20T05:10:00Z', to: '2026-11-20T05:00:00Z' }, now, last24)).code).toBe('invalid_request');
    expect(refusal(() => resolveRange({ from: '2026-10-01T00:00:00Z', to: '2026-11-02T00:00:00Z' }, now, last24)).message).toContain('at most 31 days');
    expect(resolveRange({ from: '2026-10-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }, now, last24).from.toISOString()).toBe('2026-10-01T00:00:00.000Z');
    expect(refusal(() => resolveRange({ from: '2026-11-21T00:00:00Z' }, now, last24)).details?.[0]?.path).toBe('query.from');
  });

  it('has a previous period of the same length and one bucket per hour', () => {
    const r = resolveRange({ from: '2026-11-20T00:00:00Z', to: '2026-11-20T03:00:00Z' }, now, last24);
    expect(iso(previousRange(r))).toEqual(['2026-11-19T21:00:00.000Z', '2026-11-20T00:00:00.000Z']);
    expect(hoursOf(r).map((d) => d.toISOString())).toEqual(['2026-11-20T00:00:00.000Z', '2026-11-20T01:00:00.000Z', '2026-11-20T02:00:00.000Z']);
  });
});
