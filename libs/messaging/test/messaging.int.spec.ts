/** The NATS runtime against the real server: RPC conventions, events, consumers, facts, object buckets. */
import { createHash } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { NatsConnectionImpl } from '@nats-io/nats-core/internal';
import { AppError, HEADERS, KEY_SCOPES, OBJECT_BUCKETS, newId, type EnvelopeOf, type EventEnvelope } from '@mailroom/contracts';
import { connectTestBus, createTestContext, waitFor, type TestContext } from '@mailroom/testing';
import {
  callRpc,
  deleteNamespaceStreams,
  encodeJson,
  ensureStreams,
  openBucket,
  publishEvent,
  publishFact,
  runConsumer,
  serveRpc,
  storedNothing,
  watchFacts,
  type Bus,
  type RpcHandlers,
} from '../src';
import { CoalescingTransport } from '../src/transport';

let ctx: TestContext;
let bus: Bus;
const orgId = newId('organization');
const envId = newId('environment');

function organization(id: string) {
  const now = new Date().toISOString();
  return { id, name: 'n', plan: 'free' as const, status: 'active' as const, default_env_id: envId, created_at: now, updated_at: now };
}

const handlers: RpcHandlers<'orgs'> = {
  'orgs.organization.get': async (req, c) => {
    if (c.auth.kind !== 'api_key') throw new AppError('unauthorized', 'need a key');
    if (req.org_id === orgId) throw new AppError('conflict', 'busy', { details: [{ path: 'org_id', message: 'locked' }] });
    return organization(c.auth.org_id);
  },
  'orgs.organization.update': async (_req, c) => organization(c.auth.kind === 'api_key' ? c.auth.org_id : orgId),
  'orgs.organization.createForOwner': async () => {
    throw new Error('database exploded: secret detail');
  },
  'orgs.membership.listForUser': async (_req, c) => ({
    data: [{ org_id: orgId, org_name: `${c.requestId}|${c.traceparent}|${c.client?.ip}`, role: 'owner', default_env_id: envId }],
  }),
  'orgs.environment.get': async () => ({ id: envId, org_id: orgId, name: 'x', is_default: true, created_at: new Date().toISOString() }),
  // Not called here: the orgs service's own operations, answered as a stand-in would.
  'orgs.member.list': async () => ({ data: [], next_page_token: null }),
  'orgs.organization.usage': async () => {
    throw AppError.notFound('organization');
  },
  'orgs.member.get': async () => {
    throw AppError.notFound('member');
  },
  'orgs.member.update': async () => {
    throw AppError.notFound('member');
  },
  'orgs.member.remove': async () => ({}),
  'orgs.member.leave': async () => ({}),
  'orgs.environment.create': async () => {
    throw AppError.notFound('environment');
  },
  'orgs.environment.list': async () => ({ data: [], next_page_token: null }),
  'orgs.environment.show': async () => {
    throw AppError.notFound('environment');
  },
  'orgs.environment.rename': async () => {
    throw AppError.notFound('environment');
  },
  'orgs.environment.delete': async () => ({}),
  'orgs.environment.access': async () => {
    throw AppError.notFound('environment');
  },
  'orgs.envMember.add': async () => {
    throw AppError.notFound('environment');
  },
  'orgs.envMember.list': async () => ({ data: [], next_page_token: null }),
  'orgs.envMember.remove': async () => ({}),
  'orgs.transfer.create': async () => {
    throw AppError.notFound('member');
  },
  'orgs.transfer.pending': async () => ({ data: [] }),
  'orgs.transfer.accept': async () => {
    throw AppError.notFound('ownership transfer');
  },
  'orgs.transfer.cancel': async () => {
    throw AppError.notFound('ownership transfer');
  },
  'orgs.invitation.create': async () => {
    throw new AppError('forbidden', 'not here');
  },
  'orgs.invitation.list': async () => ({ data: [], next_page_token: null }),
  'orgs.invitation.revoke': async () => {
    throw AppError.notFound('invitation');
  },
  'orgs.invitation.accept': async () => {
    throw AppError.notFound('invitation');
  },
  'orgs.upgrade.create': async () => {
    throw new AppError('forbidden', 'not here');
  },
  'orgs.upgrade.list': async () => ({ data: [], next_page_token: null }),
  'orgs.upgrade.get': async () => {
    throw AppError.notFound('upgrade request');
  },
  'orgs.upgrade.decide': async () => {
    throw AppError.notFound('upgrade request');
  },
  'orgs.upgrade.listAll': async () => ({ data: [], next_page_token: null }),
  'orgs.organization.limits': async () => {
    throw AppError.notFound('organization');
  },
  'orgs.membership.owned': async () => ({ data: [] }),
  'orgs.membership.purgeUser': async () => ({ memberships_removed: 0, organizations_deleted: [], ownership_passed: [] }),
  'orgs.membership.addForSso': async () => {
    throw AppError.notFound('organization');
  },
  'orgs.export.page': async () => {
    throw AppError.notFound('organization');
  },
};

const keyAuth = { kind: 'api_key' as const, key_id: newId('apiKey'), org_id: orgId, env_id: envId, permissions: [...KEY_SCOPES.full] };
const call = (auth: Parameters<typeof callRpc>[3]['auth'] = keyAuth) => ({ auth, requestId: 'req-1' });

beforeAll(async () => {
  ctx = await createTestContext();
  bus = await connectTestBus(ctx.env);
});

afterAll(async () => {
  await deleteNamespaceStreams(bus).catch(() => {});
  await bus?.drain();
  await ctx?.cleanup();
});

describe('transport', () => {
  it('delivers many messages written in one turn and across turns, in order', async () => {
    const subject = bus.ns.subject('test.order');
    const got: number[] = [];
    const sub = bus.nc.subscribe(subject, {
      callback: (_e, m) => {
        got.push(Number(new TextDecoder().decode(m.data)));
      },
    });
    await bus.nc.flush();
    for (let i = 0; i < 500; i++) bus.nc.publish(subject, String(i)); // one turn
    for (let i = 500; i < 600; i++) {
      bus.nc.publish(subject, String(i));
      await new Promise((r) => setImmediate(r)); // one turn each
    }
    await waitFor(() => got.length === 600, { what: '600 messages' });
    expect(got).toEqual(Array.from({ length: 600 }, (_, i) => i));
    sub.unsubscribe();
  });

  // transport.ts subclasses the library's internals: this fails if an upgrade of @nats-io/*
  // stops the bus's writes going through it (another transport, or writes not through _send).
  it('writes what one event-loop turn queued in one socket write (library internals still as subclassed)', async () => {
    const transport = (bus.nc as unknown as NatsConnectionImpl).protocol.transport;
    expect(transport).toBeInstanceOf(CoalescingTransport);
    const socket = (transport as CoalescingTransport).socket;
    const subject = bus.ns.subject('test.turn');
    await bus.nc.flush();
    const writes: string[] = [];
    const write = socket.write.bind(socket);
    socket.write = ((data: Uint8Array, ...rest: never[]) => (writes.push(Buffer.from(data).toString('latin1')), write(data, ...rest))) as typeof socket.write;
    try {
      // Ten callbacks of one turn, each its own microtask checkpoint: the stock transport
      // writes ten times.
      await new Promise<void>((resolve) => {
        for (let i = 0; i < 10; i++) setImmediate(() => bus.nc.publish(subject, String(i)));
        setImmediate(() => setImmediate(resolve));
      });
    } finally {
      socket.write = write;
    }
    expect(writes).toHaveLength(1);
    expect(writes[0]!.match(/^PUB /gm)).toHaveLength(10);
  });
});

describe('RPC', () => {
  it('answers with the parsed response and carries the call context', async () => {
    const server = serveRpc(bus, 'orgs', handlers);
    try {
      const org = await callRpc(bus, 'orgs.organization.get', {}, call());
      expect(org.id).toBe(orgId);
      const tp = '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01';
      const res = await callRpc(bus, 'orgs.membership.listForUser', { user_id: newId('user') }, {
        ...call({ kind: 'service', service: 'test' }),
        requestId: 'req-42',
        traceparent: tp,
        client: { ip: '192.0.2.1' },
      });
      expect(res.data[0]!.org_name).toBe(`req-42|${tp}|192.0.2.1`);
    } finally {
      await server.stop();
    }
  });

  it('carries a reply larger than one NATS message whole, through the replies bucket', async () => {
    // A name of 3 MB: three times the server's max_payload.
    const big = 'ü'.repeat(1_500_000);
    const server = serveRpc(bus, 'orgs', { ...handlers, 'orgs.organization.get': async () => ({ ...organization(orgId), name: big }) });
    try {
      expect(bus.nc.info!.max_payload).toBeLessThan(Buffer.byteLength(big));
      const org = await callRpc(bus, 'orgs.organization.get', {}, call());
      expect(org.name).toBe(big);
      // Read once and removed.
      await waitFor(async () => {
        const bucket = await openBucket(bus, 'replies');
        const listed = await bucket.list();
        return listed.length === 0;
      }, { what: 'the reply object removed' });
    } finally {
      await server.stop();
    }
  });

  it('turns errors into AppErrors with code, details and the NATS error headers', async () => {
    const server = serveRpc(bus, 'orgs', handlers);
    try {
      await expect(callRpc(bus, 'orgs.organization.get', {}, call({ kind: 'anonymous' }))).rejects.toMatchObject({ code: 'unauthorized' });
      await expect(callRpc(bus, 'orgs.organization.get', { org_id: orgId }, call())).rejects.toMatchObject({
        code: 'conflict',
        details: [{ path: 'org_id', message: 'locked' }],
      });
      // Invalid request: rejected by the server's schema before the handler.
      await expect(callRpc(bus, 'orgs.organization.get', { org_id: 'nope' } as never, call())).rejects.toMatchObject({ code: 'invalid_request' });
      // An unexpected failure is an internal_error whose message leaks nothing.
      const err = await callRpc(bus, 'orgs.organization.createForOwner', { owner_user_id: newId('user'), name: 'x' }, call()).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'internal_error', message: 'internal error' });
      // The raw reply follows the NATS micro-services convention.
      const raw = await bus.nc.request(bus.ns.subject('rpc.orgs.organization.get'), encodeJson({}), { timeout: 2_000, headers: natsHeaders() });
      expect(raw.headers?.get(HEADERS.errorCode)).toBe('401');
      expect(raw.headers?.get(HEADERS.error)).toBe('need a key');
    } finally {
      await server.stop();
    }
  });

  it('maps no responders to 503 and a silent responder to 504', async () => {
    await expect(callRpc(bus, 'orgs.organization.get', {}, call())).rejects.toMatchObject({ code: 'service_unavailable' });
    const silent = bus.nc.subscribe(bus.ns.subject('rpc.orgs.organization.get'));
    try {
      const started = Date.now();
      await expect(callRpc(bus, 'orgs.organization.get', {}, call(), { timeoutMs: 200 })).rejects.toMatchObject({ code: 'gateway_timeout' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    } finally {
      silent.unsubscribe();
    }
  });

  it('spreads requests over instances of a service (queue group)', async () => {
    const seen: string[] = [];
    const mk = (name: string): RpcHandlers<'orgs'> => ({
      ...handlers,
      'orgs.environment.get': async () => {
        seen.push(name);
        return { id: envId, org_id: orgId, name, is_default: true, created_at: new Date().toISOString() };
      },
    });
    const a = serveRpc(bus, 'orgs', mk('a'));
    const b = serveRpc(bus, 'orgs', mk('b'));
    try {
      for (let i = 0; i < 40; i++) await callRpc(bus, 'orgs.environment.get', { org_id: orgId, env_id: envId }, call());
      expect(seen).toHaveLength(40);
      expect(new Set(seen)).toEqual(new Set(['a', 'b']));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

function receivedEvent(id = newId('event')): EnvelopeOf<'message.received'> {
  const ts = new Date().toISOString();
  return {
    id,
    type: 'message.received',
    timestamp: ts,
    org_id: orgId,
    env_id: envId,
    data: {
      message_id: newId('message'),
      thread_id: newId('thread'),
      inbox_id: newId('inbox'),
      from_address: 'a@example.com',
      to_addresses: ['b@example.com'],
      subject: 's',
      extracted_text: 't',
      has_attachments: false,
      received_at: ts,
    },
  };
}

describe('events and consumers', () => {
  beforeAll(async () => {
    await ensureStreams(bus, ['EVENTS', 'AUTH_FACTS']);
    await ensureStreams(bus, ['EVENTS']); // idempotent
  });

  it('tells a publish that no stream took (nothing stored) from one that may have been stored', async () => {
    const err = await bus.js.publish(bus.ns.subject('nowhere.at.all'), new Uint8Array([1]), { timeout: 2_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(storedNothing(err)).toBe(true);
    expect(storedNothing(new Error('TIMEOUT'))).toBe(false);
  });

  it('stores a re-published event once (msgID = envelope id) and refuses an invalid envelope', async () => {
    const event = receivedEvent();
    const first = await publishEvent(bus, event);
    const again = await publishEvent(bus, event);
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(first.seq);
    await expect(publishEvent(bus, { ...event, id: newId('event'), data: { ...event.data, thread_id: 'x' } } as EventEnvelope)).rejects.toThrow();
  });

  it('acks, naks with a delay, and terms poison messages', async () => {
    const attempts = new Map<string, number>();
    const done: string[] = [];
    const consumer = await runConsumer(bus, {
      subject: 'events.>',
      durable: 'test--events',
      filterSubject: 'events.message.received',
      deliverPolicy: 'new',
      concurrency: 4,
      handler: async (event) => {
        const n = (attempts.get(event.id) ?? 0) + 1;
        attempts.set(event.id, n);
        const subject = event.type === 'message.received' ? event.data.subject : '';
        if (subject === 'retry' && n < 3) return { nak: 10 };
        if (subject === 'throws' && n < 2) throw new Error('transient');
        if (subject === 'poison') return { term: 'cannot be processed' };
        done.push(event.id);
        return 'ack';
      },
    });
    try {
      const ok = receivedEvent();
      const retry = receivedEvent();
      const throws = receivedEvent();
      const poison = receivedEvent();
      retry.data.subject = 'retry';
      throws.data.subject = 'throws';
      poison.data.subject = 'poison';
      for (const e of [ok, retry, throws, poison]) await publishEvent(bus, e);
      await bus.js.publish(bus.ns.subject('events.message.received'), new TextEncoder().encode('not json'));
      await waitFor(() => done.length >= 3 && done, { timeoutMs: 10_000, what: 'three events processed' });
      expect(new Set(done)).toEqual(new Set([ok.id, retry.id, throws.id]));
      expect(attempts.get(retry.id)).toBe(3);
      expect(attempts.get(throws.id)).toBe(2);
      expect(attempts.get(poison.id)).toBe(1);
      const info = await waitFor(async () => {
        const i = await bus.jsm.consumers.info(bus.ns.stream('EVENTS'), bus.ns.consumer('test--events'));
        return i.num_ack_pending === 0 && i.num_pending === 0 && i;
      });
      expect(info.num_redelivered).toBe(0);
    } finally {
      await consumer.stop();
    }
  });

  it('keeps the messages of a slow handler, and those waiting behind it: no redelivery past the ack wait', async () => {
    const calls: string[] = [];
    let finished = 0;
    const consumer = await runConsumer(bus, {
      subject: 'events.>',
      durable: 'test--slow',
      // Two at a time for eight messages: the client takes the others from the server ahead
      // of the handlers, and the last wait 4.5 s (4.5 ack waits) for one.
      concurrency: 2,
      deliverPolicy: 'new',
      ackWaitMs: 1_000,
      handler: async (event) => {
        calls.push(event.id);
        // One and a half ack waits: without word from the consumer, the server redelivers.
        await new Promise((r) => setTimeout(r, 1_500));
        finished++;
      },
    });
    try {
      const events = Array.from({ length: 8 }, () => receivedEvent());
      for (const e of events) await publishEvent(bus, e);
      await waitFor(() => finished >= 8, { timeoutMs: 15_000, what: 'the slow handlers done' });
      const info = await waitFor(async () => {
        const i = await bus.jsm.consumers.info(bus.ns.stream('EVENTS'), bus.ns.consumer('test--slow'));
        return i.num_ack_pending === 0 && i;
      }, { what: 'the messages acked' });
      expect(calls.sort()).toEqual(events.map((e) => e.id).sort());
      expect(info.num_redelivered).toBe(0);
    } finally {
      await consumer.stop();
    }
  });

  it('bounds concurrency', async () => {
    let active = 0;
    let peak = 0;
    let handled = 0;
    const consumer = await runConsumer(bus, {
      subject: 'events.>',
      durable: 'test--bounded',
      concurrency: 3,
      deliverPolicy: 'new',
      handler: async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 20));
        active--;
        handled++;
      },
    });
    try {
      for (let i = 0; i < 15; i++) await publishEvent(bus, receivedEvent());
      await waitFor(() => handled >= 15, { timeoutMs: 10_000 });
      expect(peak).toBeLessThanOrEqual(3);
      expect(peak).toBeGreaterThan(1);
    } finally {
      await consumer.stop();
    }
  });

  it('replays facts published before a watcher started', async () => {
    const before = new Date(Date.now() - 1_000);
    const sid = newId('session');
    await publishFact(bus, 'internal.auth.session.revoked', { session_id: sid, user_id: newId('user'), tokens_valid_until: new Date().toISOString() }, `t-${sid}`);
    const seen: string[] = [];
    const watch = await watchFacts(bus, 'AUTH_FACTS', ['internal.auth.session.revoked'], before, (_s, f) => seen.push((f as { session_id: string }).session_id));
    try {
      await watch.caughtUp;
      expect(seen).toContain(sid);
      const later = newId('session');
      await publishFact(bus, 'internal.auth.session.revoked', { session_id: later, user_id: newId('user'), tokens_valid_until: new Date().toISOString() }, `t-${later}`);
      await waitFor(() => seen.includes(later));
    } finally {
      await watch.stop();
    }
  });
});

describe('object buckets', () => {
  const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251);

  it('stores and reads objects, empty ones included, with their size and SHA-256 digest', async () => {
    const bucket = await openBucket(bus, 'raw');
    const name = `raw_${newId('message')}`;
    const data = bytes(10_000, 1);
    await bucket.putBlob({ name }, data);
    expect(Buffer.from((await bucket.getBlob(name))!)).toEqual(Buffer.from(data));
    const info = (await bucket.info(name))!;
    expect([info.size, info.chunks, info.deleted, info.digest]).toEqual([10_000, 1, false, `SHA-256=${createHash('sha256').update(data).digest('base64url')}=`]);

    await bucket.putBlob({ name: `${name}-empty` }, new Uint8Array(0));
    expect((await bucket.getBlob(`${name}-empty`))!.length).toBe(0);
  });

  it('replaces an existing object without leaving its old chunks (a retried store), and stores large objects in chunks', async () => {
    const bucket = await openBucket(bus, 'raw');
    const stream = `OBJ_${bus.ns.stream(OBJECT_BUCKETS.raw)}`;
    const chunks = async () => (await bus.jsm.streams.info(stream, { subjects_filter: '$O.*.C.>' })).state.subjects ?? {};
    const name = `raw_${newId('message')}`;
    const before = Object.keys(await chunks()).length;
    await bucket.putBlob({ name }, bytes(500, 2));
    await bucket.putBlob({ name }, bytes(700, 3));
    expect(Buffer.from((await bucket.getBlob(name))!)).toEqual(Buffer.from(bytes(700, 3)));
    expect(Object.keys(await chunks()).length).toBe(before + 1);

    const large = bytes(300_000, 4);
    await bucket.putBlob({ name: `${name}-large` }, large);
    expect(Buffer.from((await bucket.getBlob(`${name}-large`))!)).toEqual(Buffer.from(large));
    expect((await bucket.info(`${name}-large`))!.chunks).toBe(3);
  });
});
