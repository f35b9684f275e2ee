drop table system_mails;
