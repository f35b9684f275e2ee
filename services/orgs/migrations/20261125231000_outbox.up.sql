-- Transactional outbox (libs/runtime Outbox): membership facts are written with the change
-- they announce and relayed to ORGS_FACTS after the commit.
create table outbox (
  id text primary key,
  subject text,
  payload text not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_pending on outbox (id) where published_at is null;
