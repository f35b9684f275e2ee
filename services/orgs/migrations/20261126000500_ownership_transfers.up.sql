-- Ownership transfer requests. At most one pending per organization (the index), so two
-- owners' tabs asking at once cannot both succeed. A pending row past expires_at is expired:
-- it can no longer be accepted, and the next request marks it so.
create table ownership_transfers (
  id text primary key,
  org_id text not null references organizations (id) on delete cascade,
  from_member_id text not null,
  from_user_id text not null,
  to_member_id text not null,
  to_user_id text not null,
  status text not null check (status in ('pending', 'accepted', 'cancelled', 'expired')),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  decided_at timestamptz
);
create unique index ownership_transfers_one_pending on ownership_transfers (org_id) where status = 'pending';
