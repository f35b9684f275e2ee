alter table jobs drop column last_attempt_id;
