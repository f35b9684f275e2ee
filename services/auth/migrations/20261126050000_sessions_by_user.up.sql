-- A person's live sessions, newest first by id (GET /api/v1/user/me/sessions pages by id),
-- and all of them at once (revoke-all): the user's id, then the session's.
create index sessions_live_by_user on sessions (user_id, id) where revoked_at is null;
drop index sessions_by_user;
