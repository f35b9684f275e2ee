drop table system_suppressions;
update system_mails set status = 'sent' where status in ('bounced', 'complained');
update system_mails set status = 'failed' where status = 'suppressed';
alter table system_mails drop constraint system_mails_status_check;
alter table system_mails add constraint system_mails_status_check check (status in ('sending', 'sent', 'failed'));
