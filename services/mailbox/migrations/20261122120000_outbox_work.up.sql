-- The outbox also carries work items (mail.outbound): null = a public event.
alter table outbox add column subject text;
