/** A connection the server closes while it is checked out (between a transaction's statements) fails its user, not the process. */
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
