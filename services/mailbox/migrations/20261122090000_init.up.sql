create table inboxes (
  id text primary key,
  org_id text not null,
  env_id text not null,
  username text not null,
  domain text not null,
  -- username@domain, lower case
  address text not null,
  display_name text,
  status text not null default 'active' check (status in ('active', 'paused')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
-- One live inbox per address, whichever tenant.
create unique index inboxes_address_live on inboxes (address) where deleted_at is null;
create index inboxes_by_tenant on inboxes (org_id, env_id, id desc) where deleted_at is null;

create table threads (
  id text primary key,
  org_id text not null,
  env_id text not null,
  inbox_id text not null references inboxes (id),
  subject text not null,
  -- subject without Re:/Fwd: prefixes, lower case: the guard of header-based threading
  normalized_subject text not null,
  message_count integer not null default 0,
  -- start of the newest message's extracted text, for lists
  preview text not null default '',
  last_message_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index threads_by_inbox on threads (inbox_id, last_message_at desc, id desc);

create table messages (
  id text primary key,
  org_id text not null,
  env_id text not null,
  inbox_id text not null references inboxes (id),
  thread_id text not null references threads (id),
  direction text not null check (direction in ('inbound', 'outbound')),
  -- the raw message: object of the MAIL_RAW bucket, stored once per SMTP transaction
  raw_id text not null,
  raw_size integer not null,
  message_id_header text,
  in_reply_to text,
  "references" text[] not null default '{}',
  from_address text not null,
  from_name text,
  reply_to text[] not null default '{}',
  to_addresses text[] not null default '{}',
  cc_addresses text[] not null default '{}',
  subject text not null default '',
  text_body text not null default '',
  html_body text not null default '',
  extracted_text text,
  has_attachments boolean not null default false,
  auth jsonb not null,
  spam jsonb not null,
  mail_from text not null default '',
  -- why the message could only be read in part (timeout, size, malformed MIME); null when fully parsed
  parse_error text,
  received_at timestamptz not null,
  created_at timestamptz not null default now(),
  -- one stored message per inbox per raw message: redelivered work items change nothing
  unique (inbox_id, raw_id)
);
create index messages_by_inbox on messages (inbox_id, received_at desc, id desc);
create index messages_by_thread on messages (thread_id, received_at, id);
create index messages_by_header_id on messages (inbox_id, message_id_header) where message_id_header is not null;

create table attachments (
  id text primary key,
  message_id text not null references messages (id) on delete cascade,
  org_id text not null,
  filename text,
  content_type text not null,
  size integer not null,
  content_id text,
  disposition text,
  checksum text not null,
  position integer not null,
  -- object of the MAIL_ATTACHMENTS bucket: <raw id>.<position>, shared by the copies of one raw message
  object_name text not null
);
create index attachments_by_message on attachments (message_id, position);

create table message_labels (
  message_id text not null references messages (id) on delete cascade,
  label text not null,
  org_id text not null,
  env_id text not null,
  thread_id text not null,
  created_at timestamptz not null default now(),
  primary key (message_id, label)
);
create index message_labels_by_tenant on message_labels (org_id, env_id, label);
create index message_labels_by_thread on message_labels (thread_id);

create table outbox (
  id text primary key,
  payload text not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_pending on outbox (id) where published_at is null;
