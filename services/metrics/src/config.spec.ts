import { ConfigError } from '@mailroom/platform';
import { loadConfig } from './config';

describe('metrics configuration', () => {
  it('warns above 0.1% complaints and 2% hard bounces by default', () => {
    expect(loadConfig({}).settings.thresholds).toEqual({ complaintRate: 0.001, hardBounceRate: 0.02 });
  });

  it('takes other thresholds as fractions', () => {
    expect(loadConfig({ METRICS_COMPLAINT_RATE_WARNING: '0.0005', METRICS_HARD_BOUNCE_RATE_WARNING: '.05' }).settings.thresholds).toEqual({ complaintRate: 0.0005, hardBounceRate: 0.05 });
  });

  it('lists every problem at once: a percentage, a rate above 1, a concurrency of 0', () => {
    let err: unknown;
    try {
      loadConfig({ METRICS_COMPLAINT_RATE_WARNING: '0.1%', METRICS_HARD_BOUNCE_RATE_WARNING: '2', METRICS_CONSUMER_CONCURRENCY: '0' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as ConfigError).problems.join('\n');
    for (const name of ['METRICS_COMPLAINT_RATE_WARNING', 'METRICS_HARD_BOUNCE_RATE_WARNING', 'METRICS_CONSUMER_CONCURRENCY']) expect(text).toContain(name);
  });
});
