drop table inbox_domains;
