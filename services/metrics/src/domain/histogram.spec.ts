import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, latencyBucket, quantile } from './histogram';

describe('latency histogram', () => {
  it('puts a latency in the first bucket whose bound holds it, bounds included', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(100)).toBe(0);
    expect(latencyBucket(101)).toBe(1);
    expect(latencyBucket(3_600_000)).toBe(LATENCY_BOUNDS_MS.length - 1);
    expect(latencyBucket(3_600_001)).toBe(LATENCY_BUCKETS - 1);
  });

  it('has no quantile without deliveries', () => {
    expect(quantile(new Array<number>(LATENCY_BUCKETS).fill(0), 0.5)).toBeNull();
  });

  it('interpolates inside the bucket where the rank falls', () => {
    const counts = new Array<number>(LATENCY_BUCKETS).fill(0);
    counts[0] = 50; // 0-100 ms
    counts[1] = 50; // 100-250 ms
    expect(quantile(counts, 0.5)).toBe(100);
    expect(quantile(counts, 0.25)).toBe(50);
    expect(quantile(counts, 0.95)).toBe(235);
  });

  it('answers the lower bound of the open last bucket', () => {
    const counts = new Array<number>(LATENCY_BUCKETS).fill(0);
    counts[LATENCY_BUCKETS - 1] = 3;
    expect(quantile(counts, 0.95)).toBe(3_600_000);
  });
});
