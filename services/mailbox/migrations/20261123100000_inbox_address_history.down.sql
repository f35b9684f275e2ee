drop index inboxes_by_address;
