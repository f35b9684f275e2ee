-- The platform's health over time and its alerts (issue 28, parts 2 and 3).
-- A sampling round is claimed by its slot (the start of its interval): the instance whose
-- insert lands takes the sample, evaluates the alerts and purges what is older than the
-- retention; the others skip that slot. So several admin instances sample once per interval.
create table health_rounds (
  slot timestamptz primary key
);

create table health_samples (
  -- hsm_ + ULID of taken_at: ids sort by time.
  id text primary key,
  taken_at timestamptz not null,
  status text not null,
  -- The status of the sample before (null for the first): a change is recorded as such.
  previous_status text,
  status_changed boolean not null,
  reasons jsonb not null,
  report jsonb not null
);
create index health_samples_taken_at on health_samples (taken_at);
create index health_samples_changes on health_samples (taken_at) where status_changed;

-- One row per rule (created with its default thresholds at start-up). Its shown state
-- (ok, firing, acknowledged, muted) is the domain's rule (src/domain/alert-state.ts).
create table alerts (
  key text primary key,
  thresholds jsonb not null,
  condition_met boolean not null default false,
  -- Consecutive evaluations whose condition held (relay_unreachable fires after N).
  consecutive integer not null default 0,
  detail text,
  muted_until timestamptz,
  acknowledged_at timestamptz,
  last_fired_at timestamptz,
  last_resolved_at timestamptz,
  evaluated_at timestamptz
);

create table alert_transitions (
  id text primary key,
  key text not null references alerts (key),
  from_state text not null,
  to_state text not null,
  at timestamptz not null,
  reason text not null
);
create index alert_transitions_key_at on alert_transitions (key, at desc);
