-- The audit log (issue 28, part 5): admin actions and security-relevant tenant actions, each
-- entry written once by the service that did the action (admin's own here, in the action's
-- transaction; the others' read from the AUDIT stream). Append-only: nothing updates an entry;
-- entries older than a year are deleted by the purge (src/domain/audit-log.ts).
create table audit_log (
  id text primary key,
  at timestamptz not null,
  action text not null,
  actor_type text not null,
  actor_id text,
  org_id text,
  target_type text not null,
  target_id text not null,
  details jsonb not null,
  request_id text,
  ip text,
  -- The service whose subject carried it (admin for its own).
  source text not null
);
-- Newest first, whole or per organization; the other filters narrow these.
create index audit_log_newest on audit_log (id desc);
create index audit_log_by_org on audit_log (org_id, id desc) where org_id is not null;
create index audit_log_by_actor on audit_log (actor_id, id desc) where actor_id is not null;
create index audit_log_by_target on audit_log (target_id, id desc);
create index audit_log_by_at on audit_log (at);

create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only';
end $$;
create trigger audit_log_no_update before update on audit_log for each row execute function audit_log_append_only();
