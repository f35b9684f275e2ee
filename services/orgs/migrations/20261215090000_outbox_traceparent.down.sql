alter table outbox drop column if exists traceparent;
