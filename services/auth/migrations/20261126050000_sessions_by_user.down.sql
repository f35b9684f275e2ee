create index sessions_by_user on sessions (user_id) where revoked_at is null;
drop index sessions_live_by_user;
