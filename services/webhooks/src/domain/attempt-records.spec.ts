import type { ClaimedJob, FinishedAttempt } from '../repo/delivery.repository';
import { tally } from './attempt-records';

const endpoint = (id: string, consecutive_failures = 0, disabled = false) => ({ id, url: `https://${id}.example.com/`, disabled, consecutive_failures });
let n = 0;
function attempt(endpointId: string, ok: boolean): FinishedAttempt {
  const job = { id: ++n, endpoint_id: endpointId, event_id: `evt_${n}` } as ClaimedJob;
  return { attemptId: `wdl_${n}`, job, attempt: 1, trigger: 'scheduled', ok, httpStatus: ok ? 200 : 500, error: null, responseBody: null, durationMs: 1, at: new Date(), retryAt: null };
}
const fails = (id: string, count: number) => Array.from({ length: count }, () => attempt(id, false));

describe('tally of a batch', () => {
  it('goes on from the stored count, in the order the attempts finished; a success starts it again', () => {
    const after = tally([endpoint('a', 3), endpoint('b', 7)], [attempt('a', false), attempt('b', false), attempt('b', true), attempt('b', false)]);
    expect(after.get('a')).toEqual({ failures: 4, disabled: false, disabledNow: false, changed: true });
    expect(after.get('b')).toEqual({ failures: 1, disabled: false, disabledNow: false, changed: true });
  });

  it('an endpoint without attempts held in the batch is unchanged', () => {
    expect(tally([endpoint('a', 5)], [])).toEqual(new Map([['a', { failures: 5, disabled: false, disabledNow: false, changed: false }]]));
  });

  it('all going well writes nothing', () => {
    expect(tally([endpoint('a')], [attempt('a', true)]).get('a')!.changed).toBe(false);
  });

  it('the 50th consecutive failure disables, once; 49 + 1 success + 49 does not', () => {
    expect(tally([endpoint('a', 49)], fails('a', 1)).get('a')).toEqual({ failures: 50, disabled: true, disabledNow: true, changed: true });
    expect(tally([endpoint('a')], fails('a', 50)).get('a')!.disabledNow).toBe(true);
    expect(tally([endpoint('a')], [...fails('a', 49), attempt('a', true), ...fails('a', 49)]).get('a')).toMatchObject({ failures: 49, disabled: false });
    // Already disabled (by a user, or another instance's record): not disabled again.
    expect(tally([endpoint('a', 50, true)], fails('a', 1)).get('a')).toEqual({ failures: 51, disabled: true, disabledNow: false, changed: true });
  });
});
