drop table upgrade_requests;
alter table organizations drop constraint organizations_plan_check;
