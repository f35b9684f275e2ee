drop table environment_members;
