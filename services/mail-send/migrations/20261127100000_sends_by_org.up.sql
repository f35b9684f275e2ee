-- An organization's messages sent in a period (its usage, GET /api/v1/org/usage) are counted
-- by when the provider accepted them: without this index the count reads every send of the
-- table. Only accepted sends have sent_at, so only they are indexed. Built inside the
-- migration's transaction, like every index here (CONCURRENTLY cannot run in one): on a
-- large table, run it by hand with CONCURRENTLY first, and this step finds it made.
create index if not exists sends_sent_by_org on sends (org_id, sent_at) where sent_at is not null;
