delete from one_time_codes where purpose = 'email_change';
alter table one_time_codes drop constraint one_time_codes_purpose_check;
alter table one_time_codes add constraint one_time_codes_purpose_check check (purpose in ('email_verification', 'password_reset'));
