create index if not exists messages_received_by_org on messages (org_id, received_at)
  where direction = 'inbound' and (spam ->> 'verdict') <> 'spam';
