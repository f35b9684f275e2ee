/**
 * Endpoints of a deleted environment, without a database: deleted as one endpoint is (their
 * deliveries and attempts with them, the dispatcher told), refused afterwards, and a fact
 * read again changes nothing. The stores are in-memory stand-ins with the repositories'
 * semantics (every query filters on the tenant); the real queries are in
 * test/endpoints.int.spec.ts.
 */
import { DEFAULT_PLAN_LIMITS, newId, type Tenant } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY, ManualClock, SecretBox } from '@mailroom/platform';
import { MemoryDeletedEnvironments, memoryTransact, refusalOf } from '@mailroom/testing';
import type { EndpointRepository, EndpointRow } from '../repo/endpoint.repository';
import type { WebhooksDb } from '../repo/tables';
import { Endpoints, type EndpointsDeps } from './endpoints';
import { IpPolicy } from './ip-policy';
import type { EndpointNow } from './ports';
import { RetryPolicy } from './retry-policy';

class MemoryEndpoints implements Pick<EndpointRepository, keyof EndpointRepository> {
  rows: EndpointRow[] = [];
  constructor(private readonly deleted: MemoryDeletedEnvironments) {}
  private of(t: Tenant) {
    return this.rows.filter((r) => r.org_id === t.org_id && r.env_id === t.env_id);
  }
  async insert(row: Omit<EndpointRow, 'disabled' | 'disabled_reason' | 'disabled_at' | 'consecutive_failures'>) {
    if (this.deleted.has(row.org_id, row.env_id)) return false;
    this.rows.push({ ...row, disabled: false, disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
    return true;
  }
  async lockOrganization() {}
  async countInOrg(orgId: string) {
    return this.rows.filter((r) => r.org_id === orgId).length;
  }
  async countDisabledSince(since: Date, except: string) {
    return this.rows.filter((r) => r.disabled && r.disabled_at !== null && r.disabled_at >= since && r.disabled_reason !== except).length;
  }
  async count(t: Tenant) {
    return this.of(t).length;
  }
  async find(t: Tenant, id: string) {
    return this.of(t).find((r) => r.id === id);
  }
  async findForUpdate(t: Tenant, id: string) {
    return this.find(t, id);
  }
  async byId(id: string) {
    return this.rows.find((r) => r.id === id);
  }
  async list(t: Tenant) {
    return this.of(t);
  }
  async update(t: Tenant, id: string, set: Partial<EndpointRow>) {
    const row = await this.find(t, id);
    if (row) Object.assign(row, set);
    return row;
  }
  async deleteAllIn(t: Tenant) {
    const ids = this.of(t).map((r) => r.id);
    this.rows = this.rows.filter((r) => !ids.includes(r.id));
    return ids;
  }
  async delete(t: Tenant, id: string) {
    const found = (await this.find(t, id)) !== undefined;
    this.rows = this.rows.filter((r) => r.id !== id);
    return found;
  }
}

/** Queued deliveries and attempts, by endpoint: what deleting an endpoint takes with it. */
class MemoryDeliveries implements Pick<EndpointsDeps['deliveries'], keyof EndpointsDeps['deliveries']> {
  jobs = new Set<string>();
  attempts = new Set<string>();
  async cancelPending() {}
  async deleteForEndpoint(endpointId: string) {
    this.jobs.delete(endpointId);
  }
  async deleteAttempts(endpointId: string) {
    this.attempts.delete(endpointId);
  }
  async listAttempts() {
    return [];
  }
  async findAttempt() {
    return undefined;
  }
  async queueManual() {
    return false;
  }
}

const org = newId('organization');
const staging: Tenant = { org_id: org, env_id: newId('environment') };
const production: Tenant = { org_id: org, env_id: newId('environment') };
const fact = { ...staging, deleted_at: '2026-01-01T00:00:00.000Z' };

function setUp(inboxesOfStaging: string[] = []) {
  const deleted = new MemoryDeletedEnvironments();
  const endpoints = new MemoryEndpoints(deleted);
  const deliveries = new MemoryDeliveries();
  const changed: [string, EndpointNow][] = [];
  const api = new Endpoints({
    transact: memoryTransact<WebhooksDb>(),
    endpoints,
    deliveries,
    deleted,
    box: new SecretBox(DEVELOPMENT_ENCRYPTION_KEY),
    clock: new ManualClock(),
    urls: { allowHttp: false, ips: new IpPolicy() },
    retries: new RetryPolicy(),
    maxEndpoints: 10,
    // Plans that leave room: the limit is not what these tests are about.
    plans: { of: async () => ({ plan: 'enterprise', limits: DEFAULT_PLAN_LIMITS.enterprise, plans: DEFAULT_PLAN_LIMITS }) },
    inboxes: { inEnvironment: async (t, id) => t.env_id === staging.env_id && inboxesOfStaging.includes(id) },
    recoveries: { start: async () => ({ endpointGone: true }), find: async () => undefined },
    runRecoveries: () => {},
    wake: () => {},
    changed: (id, now) => void changed.push([id, now]),
  });
  /** An endpoint with a queued delivery and an attempt. */
  const withDeliveries = async (t: Tenant) => {
    const { id } = await api.create(t, { url: 'https://hooks.example.com/' });
    deliveries.jobs.add(id);
    deliveries.attempts.add(id);
    return id;
  };
  return { api, endpoints, deliveries, changed, withDeliveries };
}

describe('endpoints of a deleted environment', () => {
  it('are deleted as one endpoint is, with their deliveries and attempts, the dispatcher told of each; other tenants keep theirs', async () => {
    const { api, deliveries, changed, withDeliveries } = setUp();
    const gone = [await withDeliveries(staging), await withDeliveries(staging)];
    const kept = [await withDeliveries(production), await withDeliveries({ org_id: newId('organization'), env_id: staging.env_id })];

    expect(await api.environmentDeleted(fact)).toEqual({ removed: 2 });
    for (const id of gone) await expect(api.get(staging, id)).rejects.toMatchObject({ code: 'not_found' });
    expect([...deliveries.jobs].sort()).toEqual([...kept].sort());
    expect([...deliveries.attempts].sort()).toEqual([...kept].sort());
    expect(changed).toEqual(gone.map((id) => [id, undefined]));
  });

  it('are refused afterwards as an environment that is not there (404)', async () => {
    const { api } = setUp();
    await api.environmentDeleted(fact);
    const refusal = await refusalOf(api.create(staging, { url: 'https://late.example.com/' }));
    expect([refusal.code, refusal.message]).toEqual(['not_found', 'environment not found']);
    expect((await api.create(production, { url: 'https://fine.example.com/' })).id).toMatch(/^whe_/);
  });

  it('change nothing when the fact comes again', async () => {
    const { api, endpoints, changed, withDeliveries } = setUp();
    await withDeliveries(staging);
    await api.environmentDeleted(fact);
    const before = { rows: structuredClone(endpoints.rows), changed: changed.length };
    expect(await api.environmentDeleted(fact)).toEqual({ removed: 0 });
    expect({ rows: endpoints.rows, changed: changed.length }).toEqual(before);
  });
});

describe('endpoints scoped to inboxes', () => {
  it('take inboxes of their own environment only: another, or none, is not found, naming each', async () => {
    const [mine, elsewhere] = [newId('inbox'), newId('inbox')];
    const { api } = setUp([mine]);
    const created = await api.create(staging, { url: 'https://hooks.example.com/', inbox_ids: [mine] });
    expect(created.inbox_ids).toEqual([mine]);
    const refusal = await refusalOf(api.create(staging, { url: 'https://hooks.example.com/', inbox_ids: [mine, elsewhere] }));
    expect(refusal).toMatchObject({ code: 'not_found', details: [{ path: 'inbox_ids[1]', message: 'not found' }] });
    expect((await refusalOf(api.create(production, { url: 'https://hooks.example.com/', inbox_ids: [mine] }))).code).toBe('not_found');
    expect((await refusalOf(api.update(staging, created.id, { inbox_ids: [elsewhere] }))).code).toBe('not_found');
    expect((await api.update(staging, created.id, { inbox_ids: null })).inbox_ids).toBeNull();
    expect((await api.create(staging, { url: 'https://hooks.example.com/' })).inbox_ids).toBeNull();
  });
});
