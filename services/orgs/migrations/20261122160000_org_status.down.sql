alter table organizations drop column status;
