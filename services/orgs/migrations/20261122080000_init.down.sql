drop table members;
drop table environments;
drop table organizations;
