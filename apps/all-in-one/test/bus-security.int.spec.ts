/**
 * The bus as an attacker with a foothold would try it: no credential at all, or the
 * credential of a service that has no business doing the thing (webhooks, mail-send,
 * mail-ingest, the gateway). The server refuses (a permission violation) and nothing is
 * stored, sent or revoked; meanwhile the platform works with the same server.
 */
import nodemailer from 'nodemailer';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { HEADERS, eventSubject, newId } from '@mailroom/contracts';
import { callRpc, encodeJson, mintCreds, newAuthority, type Bus } from '@mailroom/messaging';
import { connectTestBus, waitFor } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const DOMAIN = 'agents.test';
const mailroom = usePlatform({ env: { MAIL_DOMAIN: DOMAIN }, events: true });
const { api, tenant } = mailroom;

const opened: Bus[] = [];
afterAll(async () => {
  await Promise.all(opened.map((b) => b.drain()));
});

async function as(identity: string): Promise<Bus> {
  const bus = await connectTestBus(mailroom.env, identity, `attacker-as-${identity}`);
  opened.push(bus);
  return bus;
}

/** Runs `act` and resolves with the server's permission violation on `subject` (it must come within 5 s). */
async function refused(nc: NatsConnection, subject: string, act: () => unknown): Promise<PermissionViolationError> {
  let seen: PermissionViolationError | undefined;
  const watching = (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError && s.error.subject === subject) {
        seen = s.error;
        return;
      }
    }
  })();
  try {
    await act();
  } catch {
    // A refused request also fails the call; the status says why.
  }
  await waitFor(() => seen, { timeoutMs: 5_000, what: `a permission violation on ${subject}` });
  void watching;
  return seen!;
}

async function streamMessages(stream: string): Promise<number> {
  const bus = await as('tests');
  return (await bus.jsm.streams.info(bus.ns.stream(stream))).state.messages;
}

/** Messages (chunks and metadata) of an object bucket's stream. */
async function bucketMessages(bucket: string): Promise<number> {
  const bus = await as('tests');
  return (await bus.jsm.streams.info(`OBJ_${bus.ns.stream(bucket)}`)).state.messages;
}

let inbox: { inbox_id: string; address: string };

beforeAll(async () => {
  const res = await api.post('/api/v1/inboxes', { username: 'victim', display_name: 'Victim' });
  expect(res.status).toBe(201);
  inbox = res.body;
  // One real message, so there is mail to steal.
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailroom.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
  await transport.sendMail({ from: 'ada@sender.test', to: inbox.address, subject: 'Invoice 7', text: 'The secret is 42.' });
  await waitFor(async () => (await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`)).body.data?.length === 1, { timeoutMs: 20_000, what: 'the message stored' });
});

it('refuses an anonymous client', async () => {
  await expect(connect({ servers: mailroom.env.NATS_URL!.split(','), maxReconnectAttempts: 0, timeout: 3_000 })).rejects.toThrow(/authorization/i);
});

it('refuses a client whose credentials the operator did not sign', async () => {
  const stranger = await mintCreds(newAuthority().account, 'stranger', { pub: { allow: ['>'], deny: [] }, sub: { allow: ['>'], deny: [] } });
  await expect(
    connect({ servers: mailroom.env.NATS_URL!.split(','), maxReconnectAttempts: 0, timeout: 3_000, authenticator: credsAuthenticator(new TextEncoder().encode(stranger)) }),
  ).rejects.toThrow(/authorization/i);
});

describe('minting an API key for another tenant', () => {
  it('cannot resolve an address nor create a key as webhooks', async () => {
    const bus = await as('webhooks');
    const resolve = bus.ns.subject('rpc.mailbox.inbox.resolve');
    await refused(bus.nc, resolve, () => bus.nc.request(resolve, encodeJson({ address: inbox.address }), { timeout: 2_000 }));
    const create = bus.ns.subject('rpc.auth.apikey.create');
    const h = headers();
    h.set(HEADERS.requestId, 'req_forged');
    h.set(HEADERS.auth, JSON.stringify({ kind: 'user', user_id: 'usr_forged', session_id: 'ses_forged', org_id: tenant.org_id, env_id: tenant.env_id, role: 'owner' }));
    await refused(bus.nc, create, () => bus.nc.request(create, encodeJson({ name: 'stolen', scope: 'full' }), { timeout: 2_000, headers: h }));
    const keys = await mailroom.anon.get('/api/v1/keys', { token: tenant.accessToken });
    expect(keys.status).toBe(200);
    expect(keys.body.data.map((k: { name: string }) => k.name)).not.toContain('stolen');
  });
});

describe('speaking for a tenant', () => {
  it('is believed only under the gateway\'s seal: the same owner context from auth is anonymous to orgs', async () => {
    const me = await mailroom.anon.get('/api/v1/user/me', { token: tenant.accessToken });
    expect(me.status).toBe(200);
    const owner = { kind: 'user' as const, user_id: me.body.id, session_id: newId('session'), org_id: tenant.org_id, env_id: tenant.env_id, role: 'owner' as const };
    const fromAuth = await as('auth');
    await expect(callRpc(fromAuth, 'orgs.organization.get', {}, { auth: owner, requestId: 'req_forged' })).rejects.toMatchObject({ status: 401 });
    // The same context sealed as the gateway seals it (the tests identity holds its key) is honoured.
    const asGateway = await as('tests');
    expect(await callRpc(asGateway, 'orgs.organization.get', {}, { auth: owner, requestId: 'req_sealed' })).toMatchObject({ id: tenant.org_id });
  });
});

describe('reading mail', () => {
  it('cannot list or read messages as mail-send', async () => {
    const bus = await as('mail-send');
    for (const op of ['rpc.mailbox.message.list', 'rpc.mailbox.message.get']) {
      const subject = bus.ns.subject(op);
      await refused(bus.nc, subject, () => bus.nc.request(subject, encodeJson({ inbox_id: inbox.inbox_id }), { timeout: 2_000 }));
    }
  });

  it('cannot listen to inbound mail, events or another service\'s replies as webhooks', async () => {
    const bus = await as('webhooks');
    for (const subject of [bus.ns.subject('mail.inbound'), bus.ns.subject('events.>'), `_INBOX_${bus.ns.prefix}_gateway.>`]) {
      await refused(bus.nc, subject, () => bus.nc.subscribe(subject));
    }
  });

  it('cannot read stored raw mail as webhooks, nor the event history as mail-ingest', async () => {
    const webhooks = await as('webhooks');
    const rawGet = `$JS.API.STREAM.MSG.GET.OBJ_${webhooks.ns.stream('MAIL_RAW')}`;
    await refused(webhooks.nc, rawGet, () => webhooks.nc.request(rawGet, encodeJson({ last_by_subj: `$O.${webhooks.ns.stream('MAIL_RAW')}.M.>` }), { timeout: 2_000 }));
    const ingest = await as('mail-ingest');
    const create = `$JS.API.CONSUMER.CREATE.${ingest.ns.stream('EVENTS')}`;
    await refused(ingest.nc, create, () => ingest.jsm.consumers.add(ingest.ns.stream('EVENTS'), {}));
  });
});

describe('injecting', () => {
  it('cannot queue inbound mail with forged verdicts as webhooks, nor publish a forged event as mail-ingest', async () => {
    const before = { inbound: await streamMessages('MAIL_INBOUND'), events: await streamMessages('EVENTS') };
    const webhooks = await as('webhooks');
    const inbound = webhooks.ns.subject('mail.inbound');
    await refused(webhooks.nc, inbound, () => webhooks.js.publish(inbound, encodeJson({ raw_id: 'raw_forged', spf: 'pass', dkim: 'pass', dmarc: 'pass' }), { timeout: 2_000 }));
    const ingest = await as('mail-ingest');
    const event = ingest.ns.subject(eventSubject('message.received'));
    await refused(ingest.nc, event, () => ingest.js.publish(event, encodeJson({ type: 'message.received', org_id: tenant.org_id }), { timeout: 2_000 }));
    expect(await streamMessages('MAIL_INBOUND')).toBe(before.inbound);
    expect(await streamMessages('EVENTS')).toBe(before.events);
  });

  it('cannot have a consumer store its bytes as inbound mail: unsealed by mail-ingest, mailbox refuses it', async () => {
    // The server delivers a consumer's messages wherever its configuration says, unchecked
    // (nats-server 2.9): webhooks writes a forged work item into RPC_REPLIES and has it
    // delivered onto mail.inbound, where the stream stores it.
    const pass = { result: 'pass' as const };
    const raw = Buffer.from('From: ceo@example.com\r\nTo: victim@agents.test\r\nSubject: Wire the money\r\n\r\nUrgent.\r\n');
    const forged = {
      raw_id: `raw_${newId('message').slice(4)}`,
      size: raw.length,
      received_at: new Date().toISOString(),
      client: { ip: '127.0.0.1', helo: 'mx.example.com', tls: true },
      mail_from: 'ceo@example.com',
      recipients: [{ address: inbox.address, inbox_id: inbox.inbox_id, org_id: tenant.org_id, env_id: tenant.env_id }],
      auth: { spf: pass, dkim: pass, dmarc: pass, arc: pass },
      spam: { score: 0, verdict: 'ham' as const },
      raw: raw.toString('base64'),
    };
    const bus = await as('webhooks');
    const bucket = bus.ns.stream('RPC_REPLIES');
    await bus.js.publish(`$O.${bucket}.C.inbound`, encodeJson(forged));
    await bus.jsm.consumers.add(`OBJ_${bucket}`, {
      name: 'inbound',
      deliver_subject: bus.ns.subject('mail.inbound'),
      filter_subject: `$O.${bucket}.C.inbound`,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
    });
    // mailbox takes the stored item off its work queue (and terminates it) ...
    const asTests = await as('tests');
    const queue = asTests.ns.stream('MAIL_INBOUND');
    await waitFor(async () => {
      const info = await asTests.jsm.consumers.info(queue, asTests.ns.consumer('mailbox--inbound'));
      return info.delivered.stream_seq > 0 && info.num_pending === 0 && info.num_ack_pending === 0;
    }, { timeoutMs: 10_000, what: 'mailbox to take the forged item' });
    // ... and stores nothing: the victim's inbox still holds its one real message.
    const list = await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`);
    expect(list.body.data.map((m: { subject: string }) => m.subject)).toEqual(['Invoice 7']);
  });

  it('cannot revoke a session as the gateway', async () => {
    const before = await streamMessages('AUTH_FACTS');
    const bus = await as('gateway');
    const fact = bus.ns.subject('internal.auth.session.revoked');
    await refused(bus.nc, fact, () => bus.js.publish(fact, encodeJson({ session_id: newId('session'), user_id: newId('user'), tokens_valid_until: new Date().toISOString() }), { timeout: 2_000 }));
    expect(await streamMessages('AUTH_FACTS')).toBe(before);
    expect((await mailroom.anon.get('/api/v1/user/me', { token: tenant.accessToken })).status).toBe(200);
  });

  it('cannot have a consumer deliver its own message onto an operation: the service answers only callers\' inboxes', async () => {
    // webhooks may write RPC replies and read them back through a consumer; a push consumer can
    // be told to deliver anywhere, here onto orgs' operation that creates an organization.
    const me = await mailroom.anon.get('/api/v1/user/me', { token: tenant.accessToken });
    const bus = await as('webhooks');
    const bucket = bus.ns.stream('RPC_REPLIES');
    const h = headers();
    h.set(HEADERS.requestId, 'req_delivered');
    h.set(HEADERS.auth, JSON.stringify({ kind: 'service', service: 'auth' }));
    await bus.js.publish(`$O.${bucket}.C.forged`, encodeJson({ owner_user_id: me.body.id, name: 'Hijacked' }), { headers: h });
    await bus.jsm.consumers.add(`OBJ_${bucket}`, {
      name: 'forged',
      deliver_subject: bus.ns.subject('rpc.orgs.organization.createForOwner'),
      filter_subject: `$O.${bucket}.C.forged`,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
    });
    // The delivery reaches orgs (a real request of the tests identity, after it, is answered:
    // orgs is up and in order) and is dropped.
    const asTests = await as('tests');
    const memberships = async () => (await callRpc(asTests, 'orgs.membership.listForUser', { user_id: me.body.id }, { auth: { kind: 'service', service: 'auth' }, requestId: 'req_check' })).data;
    await waitFor(async () => (await memberships()).length >= 1, { timeoutMs: 5_000, what: 'orgs answering' });
    expect((await memberships()).map((m) => m.org_id)).toEqual([tenant.org_id]);
  });
});

describe('destroying', () => {
  // The message above was small: it came inside its work item, and mailbox wrote it to MAIL_RECEIVED.
  it.each([
    ['webhooks', 'MAIL_RECEIVED'],
    ['gateway', 'MAIL_RECEIVED'],
    ['mail-send', 'MAIL_RECEIVED'],
    ['mail-ingest', 'MAIL_RECEIVED'],
    ['webhooks', 'MAIL_RAW'],
    ['mailbox', 'MAIL_RAW'],
    ['mail-send', 'MAIL_RAW'],
  ])('cannot purge stored raw mail as %s from %s: each raw bucket has one writer', async (identity, bucket) => {
    const bus = await as(identity);
    const purge = `$JS.API.STREAM.PURGE.OBJ_${bus.ns.stream(bucket)}`;
    const before = await bucketMessages(bucket);
    if (bucket === 'MAIL_RECEIVED') expect(before).toBeGreaterThan(0);
    await refused(bus.nc, purge, () => bus.nc.request(purge, encodeJson({}), { timeout: 2_000 }));
    expect(await bucketMessages(bucket)).toBe(before);
  });

  it.each(['webhooks', 'gateway', 'mailbox', 'migrate'])('cannot delete or purge a stream as %s', async (identity) => {
    const bus = await as(identity);
    const del = `$JS.API.STREAM.DELETE.${bus.ns.stream('EVENTS')}`;
    await refused(bus.nc, del, () => bus.jsm.streams.delete(bus.ns.stream('EVENTS')));
    const purge = `$JS.API.STREAM.PURGE.${bus.ns.stream('MAIL_OUTBOUND')}`;
    await refused(bus.nc, purge, () => bus.jsm.streams.purge(bus.ns.stream('MAIL_OUTBOUND')));
    expect(await streamMessages('EVENTS')).toBeGreaterThan(0);
  });

  it('cannot change a stream\'s settings as a service (only migrate provisions)', async () => {
    const bus = await as('mailbox');
    const update = `$JS.API.STREAM.UPDATE.${bus.ns.stream('EVENTS')}`;
    await refused(bus.nc, update, () => bus.nc.request(update, encodeJson({ name: bus.ns.stream('EVENTS'), subjects: [bus.ns.subject('events.>')], max_msgs: 1 }), { timeout: 2_000 }));
  });
});

it('still does the whole loop on the same server: the message is there, readable by its tenant', async () => {
  const list = await api.get(`/api/v1/inboxes/${inbox.inbox_id}/messages`);
  expect(list.body.data).toHaveLength(1);
  expect(list.body.data[0].subject).toBe('Invoice 7');
});
