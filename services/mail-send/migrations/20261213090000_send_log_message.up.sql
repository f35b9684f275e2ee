-- The message each logged send is (null for sends logged before, or checked without one): a
-- send retried under its Idempotency-Key keeps its message id, so it is logged once and not
-- counted against itself (issue 34: a retry after a lost answer counted twice).
alter table send_log add column if not exists message_id text;
create unique index if not exists send_log_once_per_message on send_log (message_id) where message_id is not null;
