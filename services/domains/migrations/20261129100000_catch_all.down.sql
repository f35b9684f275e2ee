drop index if exists domains_by_name;
alter table domains drop constraint if exists domains_catch_all_whole;
alter table domains drop column if exists catch_all_address;
