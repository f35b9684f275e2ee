drop table if exists uploads;
