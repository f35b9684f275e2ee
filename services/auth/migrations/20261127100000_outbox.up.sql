-- Transactional outbox (libs/runtime Outbox): account mail (mail.account) and revocation facts
-- are written with the change they tell about and relayed after the commit.
create table outbox (
  id text primary key,
  subject text,
  payload text not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_pending on outbox (id) where published_at is null;
