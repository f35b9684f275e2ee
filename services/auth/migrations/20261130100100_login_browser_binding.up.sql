-- Sign-in attempts bound to the browser that started them (login CSRF, issue 26 review):
-- the SHA-256 of the secret in its mailroom_login cookie (the gateway's). Null: an attempt
-- that no browser started (linking a provider, which is bound to the signed-in person).
alter table sso_attempts add column browser_binding_hash bytea;
alter table oauth_attempts add column browser_binding_hash bytea;
