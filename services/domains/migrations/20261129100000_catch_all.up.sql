-- Catch-all (issue 25 part 5): the address of the inbox catch_all_inbox_id names, kept beside
-- it so mail-ingest is told where mail to unknown addresses goes without asking mailbox.
alter table domains add column catch_all_address text;
alter table domains add constraint domains_catch_all_whole check ((catch_all_inbox_id is null) = (catch_all_address is null));
-- mail-ingest's lookups by name (domains.domain.route), every organization.
create index domains_by_name on domains (name);
