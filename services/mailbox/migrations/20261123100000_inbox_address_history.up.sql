-- Every inbox an address has had, deleted ones too: mail the edge accepted for an inbox
-- deleted before it arrived goes to the inbox that had the address at that moment.
create index inboxes_by_address on inboxes (address, created_at desc);
