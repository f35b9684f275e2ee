/**
 * The platform as one fixture for this app's integration tests. `usePlatform()`, called at
 * the top of a file or a describe block, registers a beforeAll that makes a test context (a
 * database copied from the run's template, a NATS namespace), starts the services, signs a
 * tenant up (its address verified), and an afterAll that stops and drops all of it in
 * reverse order.
 *
 *   const { api, tenant, events } = usePlatform({ env: { RCPT_CACHE_TTL_MS: '0' }, events: true });
 *   it('...', async () => { await api.post('/api/v1/inboxes', {}); ... });
 *
 * Its objects (api, tenant, events, ...) stand in for what the beforeAll makes, so they can be
 * destructured where usePlatform() is called; the plain values (url, smtpPort) are read inside
 * tests and hooks.
 */
import { createDb, sql, type Kysely } from '@mailroom/db';
import type { Clock } from '@mailroom/platform';
import {
  ApiClient,
  EventTap,
  createTestContext,
  signUpTenant,
  startDnsServer,
  type DnsRecord,
  type DnsServer,
  type Tenant,
  type TestContext,
} from '@mailroom/testing';
import { startPlatform, type Platform, type ServiceName } from '../src/platform';

type Env = Record<string, string>;

export interface PlatformOptions {
  /** Environment over the test context's; a function when it needs what the file started in an earlier beforeAll (a relay's URL). */
  env?: Env | (() => Env);
  clock?: Clock;
  /** Only these services (default: all). */
  services?: ServiceName[];
  /** Records served by a DNS server on loopback, which DNS_SERVERS then names. */
  dns?: DnsRecord[];
  /** The tenant signed up before the tests, by its email (default: owner@example.com); false for none. */
  tenant?: false | { email: string };
  /** Read the public events from the start of the stream (`events`). */
  events?: boolean;
}

export interface PlatformFixture {
  /** The services' environment: the test context's and the options'. */
  env: Env;
  platform: Platform;
  /** A client of the gateway without a credential. */
  anon: ApiClient;
  /** A client acting with the tenant's API key. */
  api: ApiClient;
  tenant: Tenant;
  events: EventTap;
  dns: DnsServer;
  /** The gateway's base URL. */
  readonly url: string;
  /** The port of the SMTP edge (mail-ingest). */
  readonly smtpPort: number;
  /** Another tenant (a new user, organization and API key), its address verified; a random email unless given. */
  signUp(email?: string): Promise<Tenant>;
}

interface Started {
  ctx: TestContext;
  platform: Platform;
  anon: ApiClient;
  dns?: DnsServer;
  tenant?: Tenant;
  events?: EventTap;
  signUp(email?: string): Promise<Tenant>;
}

/**
 * The person's address counts as verified, as once they used the code of their verification
 * mail (a shortcut through the run's database: tests of roles, invitations and sending are
 * about those; verification.int.spec.ts signs people up without it).
 */
async function verified(db: Kysely<unknown>, tenant: Tenant): Promise<Tenant> {
  await sql`update auth.users set email_verified_at = now() where email = ${tenant.email.toLowerCase()} and deleted_at is null`.execute(db);
  return tenant;
}

export function usePlatform(opts: PlatformOptions = {}): PlatformFixture {
  let started: Started | undefined;
  const stops = useStops();
  beforeAll(async () => {
    const dns = opts.dns ? await startDnsServer(opts.dns) : undefined;
    if (dns) stops.push(() => dns.close());
    const env = typeof opts.env === 'function' ? opts.env() : opts.env;
    const ctx = await createTestContext({ ...(dns ? { DNS_SERVERS: dns.servers } : {}), ...env });
    stops.push(() => ctx.cleanup());
    // The services run their migrator, which finds every step applied in the template's copy.
    const platform = await startPlatform({ env: ctx.env, migrate: true, ...(opts.services ? { services: opts.services } : {}), ...(opts.clock ? { clock: opts.clock } : {}) });
    stops.push(() => platform.stop());
    const db = createDb<unknown>({ url: ctx.env.DATABASE_URL ?? fail('usePlatform(): the test context has no DATABASE_URL'), schema: 'public', max: 1 });
    stops.push(() => db.destroy());
    const anon = new ApiClient(platform.services.gateway?.endpoints.http ?? fail('usePlatform(): the gateway is not running'));
    const next: Started = { ctx, platform, anon, signUp: async (email) => verified(db, await signUpTenant(anon.baseUrl, email)) };
    if (dns) next.dns = dns;
    if (opts.tenant !== false) next.tenant = await next.signUp(opts.tenant?.email ?? 'owner@example.com');
    if (opts.events) {
      const events = await EventTap.start(ctx.env);
      stops.push(() => events.stop());
      next.events = events;
    }
    started = next;
  });
  afterAll(() => {
    started = undefined;
  });
  const ready = (): Started => started ?? fail('usePlatform(): the platform starts in beforeAll; use it inside tests and hooks');
  const tenant = () => ready().tenant ?? fail('usePlatform({ tenant: false }) signed no tenant up');
  return {
    env: late(() => ready().ctx.env),
    platform: late(() => ready().platform),
    anon: late(() => ready().anon),
    api: late(() => tenant().api),
    tenant: late(tenant),
    events: late(() => ready().events ?? fail('usePlatform() reads events only with { events: true }')),
    dns: late(() => ready().dns ?? fail('usePlatform() serves DNS only with { dns: [...] }')),
    get url() {
      return ready().anon.baseUrl;
    },
    get smtpPort() {
      const smtp = ready().platform.services['mail-ingest']?.endpoints.smtp;
      return smtp ? Number(new URL(smtp).port) : fail('usePlatform(): mail-ingest is not running');
    },
    signUp: (email) => ready().signUp(email),
  };
}

/** A test context alone (a database and a NATS namespace), for files that start services their own way. */
export function useTestContext(overrides: Env = {}): { env: Env; onStop(stop: () => Promise<unknown>): void } {
  let ctx: TestContext | undefined;
  const stops = useStops();
  beforeAll(async () => {
    const made = await createTestContext(overrides);
    stops.push(() => made.cleanup());
    ctx = made;
  });
  return {
    env: late(() => ctx?.env ?? fail('useTestContext(): the context is made in beforeAll; use it inside tests and hooks')),
    // jest runs a file's afterAll hooks in the order they were declared, after this one's:
    // what runs on the context is stopped here, before the context is dropped.
    onStop: (stop) => stops.push(stop),
  };
}

/** Stops pushed while starting, run in reverse in afterAll: all of them, even when one fails. */
function useStops(): { push(stop: () => Promise<unknown>): void } {
  const stops: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    const errors: unknown[] = [];
    for (const stop of stops.splice(0).reverse()) await stop().catch((err: unknown) => errors.push(err));
    if (errors.length) throw new AggregateError(errors, 'stopping a fixture failed');
  });
  return { push: (stop) => void stops.push(stop) };
}

/**
 * An object standing in for one a beforeAll makes: every use goes to the real one (methods
 * bound to it), and a use before it exists throws what `get` throws.
 */
function late<T extends object>(get: () => T): T {
  return new Proxy({} as T, {
    get(_, key) {
      const target = get();
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set: (_, key, value) => Reflect.set(get(), key, value),
    has: (_, key) => Reflect.has(get(), key),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor(_, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(get(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(get()),
  });
}

function fail(message: string): never {
  throw new Error(message);
}
