drop table api_keys;
drop table signing_keys;
drop table refresh_tokens;
drop table sessions;
drop table users;
