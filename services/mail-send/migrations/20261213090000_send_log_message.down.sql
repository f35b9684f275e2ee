drop index if exists send_log_once_per_message;
alter table send_log drop column if exists message_id;
