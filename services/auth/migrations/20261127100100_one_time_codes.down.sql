drop table one_time_codes;
