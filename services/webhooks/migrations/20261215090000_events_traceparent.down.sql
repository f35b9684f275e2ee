alter table events drop column if exists traceparent;
