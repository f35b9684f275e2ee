drop table outbox;
drop table feedback_processed;
drop table suppressions;
drop table send_log;
drop table sends;
