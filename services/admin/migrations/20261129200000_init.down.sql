drop table if exists admin_keys;
