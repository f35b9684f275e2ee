import { AttemptMetrics } from './metrics';

describe('webhook attempt metrics', () => {
  it('records without a meter provider (the API no-op), and reuses one attributes object per failure kind', () => {
    const m = new AttemptMetrics();
    const failed = m as unknown as { failed: Map<string, object> };
    m.attempted({ ok: true, error: null, durationMs: 12 });
    m.attempted({ ok: false, error: 'timeout', durationMs: 30_000 });
    m.attempted({ ok: false, error: 'timeout', durationMs: 30_000 });
    m.attempted({ ok: false, error: null, durationMs: 0 });
    expect([...failed.failed.keys()]).toEqual(['timeout', 'failed']);
  });
});
