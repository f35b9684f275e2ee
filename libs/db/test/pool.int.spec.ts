/** A connection the server closes while it is checked out (between a transaction's statements) fails its user, not the process. */
import net from 'node:net';
import { createTestContext, type TestContext } from '@mailroom/testing';
import { createPool } from '../src';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx?.cleanup();
});

it('a checked-out connection closed by the server: its next statement fails, the process goes on', async () => {
  const pool = createPool({ url: ctx.env.DATABASE_URL!, schema: 'public', max: 2 });
  try {
    const client = await pool.connect();
    await client.query('begin');
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    // No statement of its own is running: the server's close reaches the client as an 'error' event.
    const closed = new Promise((resolve) => client.once('end', resolve));
    await pool.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    await closed;
    await expect(client.query('select 1')).rejects.toThrow();
    client.release(true);
    // The pool goes on with a new connection.
    expect((await pool.query<{ n: number }>('select 1 as n')).rows).toEqual([{ n: 1 }]);
  } finally {
    await pool.end();
  }
});

/**
 * A TCP relay to PostgreSQL that can go silent: from `freeze()` on, it forwards nothing in
 * either direction and closes nothing, as a dead host or a dropped route does.
 */
async function silentRelay(target: { host: string; port: number }) {
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target.port, target.host);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    inbound.on('data', (d) => void (frozen || outbound.write(d)));
    outbound.on('data', (d) => void (frozen || inbound.write(d)));
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => void (frozen = true),
    thaw: () => void (frozen = false),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

it('a statement that gets no answer at all fails after queryTimeoutMs, and the pool goes on with a new connection', async () => {
  const target = new URL(ctx.env.DATABASE_URL!);
  const relay = await silentRelay({ host: target.hostname, port: Number(target.port || 5432) });
  const url = new URL(ctx.env.DATABASE_URL!);
  url.host = `127.0.0.1:${relay.port}`;
  const pool = createPool({ url: url.toString(), schema: 'public', max: 1, statementTimeoutMs: 500, queryTimeoutMs: 1_000 });
  try {
    expect((await pool.query('select 1 as n')).rows).toEqual([{ n: 1 }]);
    relay.freeze();
    // Without the client's own bound this waits for ever: the server's statement_timeout never reaches it.
    const silent = pool.query('select 2 as n');
    let bound: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([silent.then(() => 'answered', (err: Error) => err.message), new Promise((r) => (bound = setTimeout(() => r('still waiting'), 15_000)))]);
    // Left pending, the bound would keep jest's worker alive at the end of the run.
    clearTimeout(bound);
    expect(outcome).toMatch(/terminated|no answer/i);
    relay.thaw();
    expect((await pool.query('select 3 as n')).rows).toEqual([{ n: 3 }]);
  } finally {
    await pool.end();
    await relay.close();
  }
});
