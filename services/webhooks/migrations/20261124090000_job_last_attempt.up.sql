-- A delivery waiting for a retry knows the attempt row that scheduled it: when the retry is
-- cancelled (its endpoint disabled, or the delivery dropped), that row's next_attempt_at is
-- cleared by key, so no record announces an attempt that will not be made. Deliveries queued
-- before this migration have none and keep theirs (the column is written at each reschedule).
alter table jobs add column last_attempt_id text collate "C";
