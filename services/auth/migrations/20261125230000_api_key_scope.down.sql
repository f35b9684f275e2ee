alter table api_keys drop column permissions;
alter table api_keys drop column scope;
