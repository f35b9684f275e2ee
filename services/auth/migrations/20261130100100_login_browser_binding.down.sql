alter table oauth_attempts drop column browser_binding_hash;
alter table sso_attempts drop column browser_binding_hash;
