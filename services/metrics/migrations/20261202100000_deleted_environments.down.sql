drop table deleted_environments;
