drop table if exists send_requests;
