-- An endpoint scoped to inboxes receives only their events; null: every inbox's, and the
-- events of none (domain.verified).
alter table endpoints add column inbox_ids text[];
