-- The plans an organization may be on (contracts plans.ts, PLAN_NAMES).
alter table organizations add constraint organizations_plan_check check (plan in ('free', 'pro', 'enterprise'));
-- An organization's requests for another plan, decided by a platform operator. At most one
-- pending per organization (the index), so two owners' tabs asking at once cannot both succeed.
create table upgrade_requests (
  id text primary key,
  org_id text not null references organizations (id) on delete cascade,
  plan text not null check (plan in ('free', 'pro', 'enterprise')),
  current_plan text not null check (current_plan in ('free', 'pro', 'enterprise')),
  message text,
  status text not null check (status in ('pending', 'approved', 'declined')),
  requested_by text not null,
  created_at timestamptz not null,
  decided_at timestamptz,
  decision_note text
);
create unique index upgrade_requests_one_pending on upgrade_requests (org_id) where status = 'pending';
create index upgrade_requests_by_org on upgrade_requests (org_id, id);
