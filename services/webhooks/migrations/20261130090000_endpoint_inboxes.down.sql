alter table endpoints drop column inbox_ids;
