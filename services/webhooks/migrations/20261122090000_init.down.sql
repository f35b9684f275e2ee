drop table attempts;
drop table jobs;
drop table events;
drop table endpoints;
