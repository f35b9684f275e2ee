drop table oauth_identities;
drop table oauth_attempts;
