import { replicationOf } from './replication';

describe('NATS_STREAM_REPLICAS', () => {
  it('is 1 when absent, and takes 1, 3 or 5', () => {
    expect(replicationOf({})).toEqual({ replicas: 1 });
    for (const n of [1, 3, 5]) expect(replicationOf({ NATS_STREAM_REPLICAS: String(n) })).toEqual({ replicas: n });
  });

  it('refuses even counts, counts NATS does not place, and what is not a number, naming the variable', () => {
    for (const bad of ['2', '4', '0', '7', 'three', '3.0']) expect(() => replicationOf({ NATS_STREAM_REPLICAS: bad })).toThrow(/NATS_STREAM_REPLICAS/);
  });
});
