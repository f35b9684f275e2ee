drop index if exists messages_received_by_org;
