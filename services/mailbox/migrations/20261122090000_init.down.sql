drop table outbox;
drop table message_labels;
drop table attachments;
drop table messages;
drop table threads;
drop table inboxes;
