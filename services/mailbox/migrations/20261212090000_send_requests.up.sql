-- The ids a send was given under the gateway's key of its Idempotency-Key (Mr-Request-Key):
-- a call retried after its answer was lost (the gateway answered 5xx, which it does not keep)
-- reuses them, and the message, stored once per (inbox, raw id), is not made twice. Kept for
-- the gateway's idempotency window (24 hours) and pruned after it.
create table if not exists send_requests (
  org_id text not null,
  env_id text not null,
  request_key text not null,
  message_id text not null,
  raw_id text not null,
  thread_id text not null,
  created_at timestamptz not null,
  primary key (org_id, env_id, request_key)
);
create index if not exists send_requests_by_age on send_requests (created_at);
