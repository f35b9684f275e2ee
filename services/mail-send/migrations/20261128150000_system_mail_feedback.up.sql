-- What comes back about mail from the platform itself: a hard bounce or a complaint marks the
-- mail and keeps the platform from mailing the address again (system_suppressions).
alter table system_mails drop constraint system_mails_status_check;
alter table system_mails add constraint system_mails_status_check
  check (status in ('sending', 'sent', 'failed', 'suppressed', 'bounced', 'complained'));

create table system_suppressions (
  address text primary key, -- lower-cased
  reason text not null check (reason in ('hard_bounce', 'complaint', 'unsubscribe')),
  system_mail_id text not null,
  created_at timestamptz not null
);
