drop index if exists sends_sent_by_org;
