-- Recoveries run in the background: a window of up to 14 days is read back from the event
-- stream, which holds every tenant's events, so it can take minutes. A row is the request and
-- its progress: the stream sequence to read from next and the events queued so far, under a
-- lease (one instance works on it; if that instance dies, another resumes where it was).
create table recoveries (
  id text primary key,
  endpoint_id text not null references endpoints (id) on delete cascade,
  since timestamptz not null,
  until timestamptz not null,
  status text not null check (status in ('running', 'finished', 'failed')),
  queued integer not null default 0,
  -- Null until the first events are read: start at the stream time of `since` (less a margin).
  next_seq bigint,
  failures integer not null default 0,
  error text,
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  finished_at timestamptz
);
-- One running recovery per endpoint: a second request is answered 409 with the first's id.
create unique index recoveries_one_running on recoveries (endpoint_id) where status = 'running';
-- An endpoint's recoveries (deleted with it, by the foreign key).
create index recoveries_by_endpoint on recoveries (endpoint_id, id);
