drop index api_keys_by_creator;
drop table recovery_tokens;
alter table sessions drop column authenticated_at;
drop index users_deleted;
drop index users_email;
create unique index users_email_live on users (email) where deleted_at is null;
