-- An organization's messages received in a period (its usage, GET /api/v1/org/usage): inbound
-- messages that passed the spam check, by received_at, in every inbox of the organization.
-- Without this index the count reads every message of the table (messages_by_inbox starts
-- with the inbox). The predicate is the count's own, so the count reads the index alone.
-- Built inside the migration's transaction, like every index here (CONCURRENTLY cannot run
-- in one): on a large table, run it by hand with CONCURRENTLY first, and this step finds it.
create index if not exists messages_received_by_org on messages (org_id, received_at)
  where direction = 'inbound' and (spam ->> 'verdict') <> 'spam';
