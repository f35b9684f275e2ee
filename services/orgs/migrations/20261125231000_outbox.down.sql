drop table outbox;
