create index if not exists sends_sent_by_org on sends (org_id, sent_at) where sent_at is not null;
