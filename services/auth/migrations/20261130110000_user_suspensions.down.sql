drop table user_suspensions;
