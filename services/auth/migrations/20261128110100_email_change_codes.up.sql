-- A third purpose of mailed codes: confirming a new address (domain/email-change.ts). The
-- row's email is the new address, which the code proves.
alter table one_time_codes drop constraint one_time_codes_purpose_check;
alter table one_time_codes add constraint one_time_codes_purpose_check check (purpose in ('email_verification', 'password_reset', 'email_change'));
