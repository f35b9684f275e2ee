import { JetStreamApiError } from '@nats-io/jetstream';
import { CANNOT_PLACE, replicaError } from './streams';

const apiError = (err_code: number, description: string) => new JetStreamApiError({ code: 500, err_code, description });

describe('a refusal to place replicas', () => {
  it('is said in terms of NATS_STREAM_REPLICAS for each code the server places nothing with, the server\'s words kept', () => {
    // As nats-server 2.9 answers: one server asked for 3 at creation; a 3-node cluster asked for 5.
    for (const [code, words] of [
      [10074, 'replicas > 1 not supported in non-clustered mode'],
      [10005, 'no suitable peers for placement'],
      [10023, 'insufficient resources'],
    ] as const) {
      const err = replicaError('EVENTS', 5, apiError(code, words));
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toBe(`stream EVENTS cannot have 5 replica(s) (${words}): NATS_STREAM_REPLICAS must not exceed the JetStream servers of the cluster (1 for one server)`);
      expect((err as Error).cause).toBeInstanceOf(JetStreamApiError);
    }
    expect([...CANNOT_PLACE].sort()).toEqual([10005, 10023, 10074]);
  });

  it('leaves any other error as it is', () => {
    const other = apiError(10058, 'stream name already in use with a different configuration');
    expect(replicaError('EVENTS', 3, other)).toBe(other);
    const plain = new Error('timeout');
    expect(replicaError('EVENTS', 3, plain)).toBe(plain);
  });
});
