-- Uploads to send (POST /api/v1/attachments, issue 31): the bytes are object `id` of
-- MAIL_UPLOADS; a send copies them into MAIL_ATTACHMENTS, so a row is only needed until it
-- expires (24 hours), and the prune deletes it after.
create table if not exists uploads (
  id text primary key,
  org_id text not null,
  env_id text not null,
  filename text not null,
  content_type text not null,
  size bigint not null,
  sha256 text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index if not exists uploads_by_expiry on uploads (expires_at);
