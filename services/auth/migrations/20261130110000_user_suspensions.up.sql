-- Accounts suspended by the platform's operators (issue 28, part 5): a row while suspended.
-- A suspended person opens no session and their API keys do not act; the audit log keeps the
-- history (who suspended and lifted it, when, why).
create table user_suspensions (
  user_id text primary key references users (id) on delete cascade,
  suspended_at timestamptz not null,
  reason text not null,
  -- The admin key that suspended the account.
  suspended_by text not null
);
