-- jobs becomes the live queue: a delivery is a row only while it still has an attempt to
-- make (pending, or in flight under a worker's lease). A finished delivery (delivered,
-- failed for good, cancelled) is deleted; its history is its rows in attempts. Under load
-- this is what PostgreSQL spends least on: an insert, at most a claim (a HOT update, as no
-- indexed column changes) and a delete, with two indexes instead of five and no foreign key
-- checks (endpoint deletion removes its deliveries itself; events are never deleted).
delete from jobs where state not in ('pending', 'in_flight');
alter table jobs drop constraint jobs_endpoint_id_fkey;
alter table jobs drop constraint jobs_event_id_fkey;
alter table jobs drop constraint jobs_state_check;
alter table jobs add constraint jobs_state_check check (state in ('pending', 'in_flight'));
update jobs set next_attempt_at = updated_at where next_attempt_at is null;
alter table jobs alter column next_attempt_at set not null;
drop index jobs_once_per_event;
drop index jobs_due;
drop index jobs_leased;
drop index jobs_by_endpoint;
-- Claims read each endpoint's due deliveries in order; deleting an endpoint's deliveries and
-- recovery's "already queued" check use it too.
create index jobs_queue on jobs (endpoint_id, next_attempt_at);
-- Room on each page for the claim's new row version (HOT); a queue table is vacuumed often.
alter table jobs set (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02);

-- Leases are held by a worker, not by each delivery: a worker renews one row, and the
-- in-flight deliveries of a worker whose lease ran out are due again.
alter table jobs drop column locked_until;
create table workers (
  owner text primary key,
  alive_until timestamptz not null
);
insert into workers (owner, alive_until)
select distinct lock_owner, now() from jobs where lock_owner is not null;

-- An event is fanned out once: a redelivered event finds fanned_out set and adds nothing.
-- Recovery stores events it re-sends with fanned_out false, so a fan-out still to come is not lost.
alter table events add column fanned_out boolean not null default true;
