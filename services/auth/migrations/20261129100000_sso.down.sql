alter table sessions drop column method;
drop table sso_identities;
drop table sso_attempts;
drop table sso_configurations;
