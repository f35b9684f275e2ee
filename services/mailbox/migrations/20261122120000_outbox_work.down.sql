alter table outbox drop column subject;
