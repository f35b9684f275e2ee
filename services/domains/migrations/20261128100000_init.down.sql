drop table outbox;
drop table deleted_environments;
drop table domains;
