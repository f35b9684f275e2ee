// The bare limit for bench:gateway: express and one pg query per request, the same query
// the orgs service runs for GET /api/v1/org, with no authentication, bus or validation.
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, options: '-c search_path=orgs' });
const orgId = process.env.ORG_ID;
const app = express();
app.get('/api/v1/org', async (_req, res) => {
  const { rows } = await pool.query(
    'select o.*, e.id as default_env_id from organizations o join environments e on e.org_id = o.id and e.is_default where o.id = $1',
    [orgId],
  );
  const o = rows[0];
  res.json({ id: o.id, name: o.name, plan: o.plan, default_env_id: o.default_env_id, created_at: o.created_at.toISOString(), updated_at: o.updated_at.toISOString() });
});
const server = app.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
