alter table sends drop column if exists traceparent;
