/**
 * Two instances of mail-send (each its own bus connection, database pool and lifecycle, as two
 * processes would have) sharing the pre-send checks that mailbox asks of them through the
 * queue group: an inbox's and an organization's send rates hold across both, even when every
 * check of a burst arrives at once (issue 34, part 3).
 */
import { sql, createDb, type Kysely } from '@mailroom/db';
import { AppError, newId, rpcSubject, type Organization } from '@mailroom/contracts';
import { callRpc, encodeJson, type Bus } from '@mailroom/messaging';
import { bootServices, connectTestBus, createTestContext, type BootedServices, type TestContext } from '@mailroom/testing';
import { mailSendService } from '../src/main';

const PER_INBOX = 5;
const PER_ORG = 8;

let ctx: TestContext;
let bus: Bus;
let db: Kysely<unknown>;
const instances: BootedServices[] = [];

/** orgs' answer to `orgs.organization.get`, played by the test: every organization is active. */
function standInOrganizations(b: Bus): void {
  b.nc.subscribe(b.ns.subject(rpcSubject('orgs.organization.get')), {
    queue: b.ns.queue('orgs'),
    callback: (err, msg) => {
      if (err || !msg.reply) return;
      const { org_id } = msg.json<{ org_id: string }>();
      const now = new Date().toISOString();
      const org: Organization = { id: org_id, name: 'Org', plan: 'free', status: 'active', default_env_id: newId('environment'), created_at: now, updated_at: now };
      msg.respond(encodeJson(org));
    },
  });
}

beforeAll(async () => {
  ctx = await createTestContext();
  bus = await connectTestBus(ctx.env);
  standInOrganizations(bus);
  db = createDb<unknown>({ url: ctx.env.DATABASE_URL!, schema: 'mail_send', max: 2 });
  // From MAIL_DOMAIN: no custom domain to ask domains about.
  const env = { ...ctx.env, MAIL_DOMAIN: 'agents.test', SEND_RATE_PER_INBOX_PER_MINUTE: String(PER_INBOX), SEND_RATE_PER_ORG_PER_MINUTE: String(PER_ORG) };
  for (let i = 0; i < 2; i++) instances.push(await bootServices([mailSendService], env));
}, 60_000);

afterAll(async () => {
  for (const i of instances) await i.stop();
  await db?.destroy();
  await bus?.drain();
  await ctx?.cleanup();
});

/** The check mailbox asks before storing a send, as mailbox (service-only); `message_id`: the send's. */
function check(org_id: string, env_id: string, inbox_id: string, message_id?: string) {
  return callRpc(
    bus,
    'mail-send.outbound.check',
    { org_id, env_id, inbox_id, inbox_status: 'active', from_address: 'agent@agents.test', to_addresses: ['ada@example.com'], subject: 'Hello', ...(message_id ? { message_id } : {}) },
    { auth: { kind: 'service', service: 'mailbox' }, requestId: newId('request') },
  ).then(
    () => 'admitted' as const,
    (err: unknown) => {
      if (err instanceof AppError && err.code === 'rate_limited') return 'rate_limited' as const;
      throw err;
    },
  );
}

const logged = async (orgId: string) => (await sql<{ n: number }>`select count(*)::int as n from send_log where org_id = ${orgId}`.execute(db)).rows[0]!.n;

it("admits exactly an inbox's limit of a burst checked at once by two instances, and logs only those", async () => {
  const org = newId('organization');
  const env = newId('environment');
  const inbox = newId('inbox');
  const answers = await Promise.all(Array.from({ length: 40 }, () => check(org, env, inbox)));
  expect(answers.filter((a) => a === 'admitted')).toHaveLength(PER_INBOX);
  expect(answers.filter((a) => a === 'rate_limited')).toHaveLength(40 - PER_INBOX);
  expect(await logged(org)).toBe(PER_INBOX);
});

it("admits exactly an organization's limit over its inboxes, checked at once by two instances", async () => {
  const org = newId('organization');
  const env = newId('environment');
  const inboxes = Array.from({ length: 4 }, () => newId('inbox'));
  // 4 inboxes x 4 checks: under each inbox's limit, twice the organization's.
  const answers = await Promise.all(inboxes.flatMap((inbox) => Array.from({ length: 4 }, () => check(org, env, inbox))));
  expect(answers.filter((a) => a === 'admitted')).toHaveLength(PER_ORG);
  expect(await logged(org)).toBe(PER_ORG);
});

it('counts a send checked again under its message id (a retry after a lost answer) once, on either instance, and never against itself', async () => {
  const org = newId('organization');
  const env = newId('environment');
  const inbox = newId('inbox');
  const sends = Array.from({ length: PER_INBOX }, () => newId('message'));
  // The inbox's limit, each send checked once...
  for (const m of sends) expect(await check(org, env, inbox, m)).toBe('admitted');
  expect(await logged(org)).toBe(PER_INBOX);
  // ...then each retried, several times at once (the queue group spreads them over both instances):
  // at the limit, but a retry is the same send, admitted and not logged again.
  const retries = await Promise.all(sends.flatMap((m) => [check(org, env, inbox, m), check(org, env, inbox, m), check(org, env, inbox, m)]));
  expect(retries.every((a) => a === 'admitted')).toBe(true);
  expect(await logged(org)).toBe(PER_INBOX);
  // A new send is over the limit.
  expect(await check(org, env, inbox, newId('message'))).toBe('rate_limited');
  expect(await check(org, env, inbox)).toBe('rate_limited');
  expect(await logged(org)).toBe(PER_INBOX);
});
