-- Recipients a report confirmed delivered: message.delivered is announced once per recipient,
-- whichever report (one per destination domain, one per SES notification, a repeat) confirms it.
create table delivered_recipients (
  message_id text not null,
  address text not null,
  delivered_at timestamptz not null,
  primary key (message_id, address)
);
