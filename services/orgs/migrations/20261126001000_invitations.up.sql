-- Invitations by email. The token is stored only as its SHA-256 (token_hash); at most one
-- pending invitation per organization and address (a new one replaces it). A pending row
-- past expires_at is expired.
create table invitations (
  id text primary key,
  org_id text not null references organizations (id) on delete cascade,
  email text not null,
  role text not null check (role in ('admin', 'member', 'viewer')),
  token_hash text not null unique,
  status text not null check (status in ('pending', 'accepted', 'revoked')),
  invited_by_user_id text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  decided_at timestamptz,
  member_id text
);
create unique index invitations_one_pending on invitations (org_id, email) where status = 'pending';
create index invitations_by_org on invitations (org_id, id);
