drop index sessions_recent_by_user;
