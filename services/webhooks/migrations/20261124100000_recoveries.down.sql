drop table recoveries;
