-- Mail from the platform itself (mail.system): one row per mail id, so a redelivered work
-- item is not sent twice. Only the template and the recipient are kept, never the data.
create table system_mails (
  id text primary key,
  template text not null,
  to_address text not null,
  status text not null check (status in ('sending', 'sent', 'failed')),
  attempts integer not null default 1,
  last_error text,
  created_at timestamptz not null,
  finished_at timestamptz
);
