drop table attempt_guards;
