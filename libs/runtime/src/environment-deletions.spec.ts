import { AppError, newId } from '@mailroom/contracts';
import { applyEnvironmentDeletion, environmentLookup, type EnvironmentDeleted } from './environment-deletions';

const fact: EnvironmentDeleted = { org_id: newId('organization'), env_id: newId('environment'), deleted_at: '2026-11-27T10:00:00.000Z' };

function steps(exists: () => Promise<boolean>) {
  const removed: EnvironmentDeleted[] = [];
  return {
    removed,
    steps: {
      exists,
      remove: async (f: EnvironmentDeleted) => {
        removed.push(f);
        return { removed: 2 };
      },
    },
  };
}

describe('applying an environment deletion', () => {
  it('removes what the environment holds once orgs no longer has it', async () => {
    const s = steps(async () => false);
    expect(await applyEnvironmentDeletion(fact, s.steps)).toEqual({ outcome: 'ack', removed: 2 });
    expect(s.removed).toEqual([fact]);
  });

  it('removes nothing, and terminates the fact, while orgs still has the environment (a forged fact)', async () => {
    const s = steps(async () => true);
    expect(await applyEnvironmentDeletion(fact, s.steps)).toEqual({ outcome: { term: expect.stringMatching(/still exists/) } });
    expect(s.removed).toEqual([]);
  });

  it('removes nothing when orgs cannot be asked: the failure goes back to the consumer, which retries', async () => {
    const s = steps(async () => {
      throw new AppError('service_unavailable', 'orgs is down');
    });
    await expect(applyEnvironmentDeletion(fact, s.steps)).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(s.removed).toEqual([]);
  });
});

describe('asking orgs about an environment', () => {
  it('is true when orgs answers the environment, false when it answers not_found, and throws anything else', async () => {
    const asked: unknown[] = [];
    expect(await environmentLookup(async (req) => asked.push(req))(fact)).toBe(true);
    expect(asked).toEqual([{ org_id: fact.org_id, env_id: fact.env_id }]);
    expect(await environmentLookup(async () => Promise.reject(AppError.notFound('environment')))(fact)).toBe(false);
    await expect(environmentLookup(async () => Promise.reject(new AppError('gateway_timeout', 'slow')))(fact)).rejects.toMatchObject({ code: 'gateway_timeout' });
  });
});
