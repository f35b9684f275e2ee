-- The clients an account's sessions were used from lately, live or ended (the new-sign-in
-- notice, services/auth/src/domain/sign-in-notice.ts): by person, then when last used.
create index sessions_recent_by_user on sessions (user_id, last_refreshed_at);
