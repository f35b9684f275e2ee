drop table if exists delivered_recipients;
