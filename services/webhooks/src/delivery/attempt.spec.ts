import { createLogger, DEVELOPMENT_ENCRYPTION_KEY, ManualClock, SecretBox } from '@mailroom/platform';
import { Webhook } from 'standardwebhooks';
import { RetryPolicy } from '../domain/retry-policy';
import type { ClaimedJob } from '../repo/delivery.repository';
import { attemptOnce, Secrets, type AttemptDeps } from './attempt';
import type { PostResult } from './http-client';

const box = new SecretBox(DEVELOPMENT_ENCRYPTION_KEY);
const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const job: ClaimedJob = {
  id: 1,
  endpoint_id: 'whe_1',
  event_id: 'evt_1',
  origin: 'event',
  attempts: 0,
  max_attempts: 10,
  body: Buffer.from('{"id":"evt_1"}'),
  url: 'https://hooks.example.com/',
  secret_sealed: box.seal(secret, 'whe_1'),
};

function deps(answer: PostResult, seen: Record<string, string>[] = []): AttemptDeps {
  return {
    http: { post: async (_url, _body, headers) => (seen.push(headers), answer) },
    secrets: new Secrets(box),
    // No jitter: the schedule's 5 s exactly.
    retries: new RetryPolicy(undefined, () => 0.5),
    clock: new ManualClock(new Date()),
    log: createLogger({ service: 'test', level: 'silent' }),
    newAttemptId: () => 'wdl_1',
  };
}

describe('attemptOnce', () => {
  it('signs with both schemes, and a success has no next attempt', async () => {
    const seen: Record<string, string>[] = [];
    const out = await attemptOnce(job, deps({ ok: true, httpStatus: 204, timedOut: false, durationMs: 3 }, seen), new AbortController().signal);
    expect(out).toMatchObject({ ok: true, httpStatus: 204, attempt: 1, trigger: 'scheduled', retryAt: null, attemptId: 'wdl_1' });
    expect(new Webhook(secret).verify(job.body.toString(), seen[0]!)).toEqual({ id: 'evt_1' });
    expect(seen[0]!['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a failure gets its next attempt from the retry policy, Retry-After within [scheduled, 2x]', async () => {
    const d = deps({ ok: false, httpStatus: 503, error: 'non_2xx_status', timedOut: false, durationMs: 3, retryAfter: '8' });
    const out = await attemptOnce(job, d, new AbortController().signal);
    expect(out !== 'aborted' && out.retryAt!.getTime() - d.clock.now().getTime()).toBe(8_000);
  });

  it('cut short: aborted, nothing to record', async () => {
    expect(await attemptOnce(job, deps({ ok: false, httpStatus: 0, error: 'aborted', timedOut: false, durationMs: 1 }), new AbortController().signal)).toBe('aborted');
  });
});
