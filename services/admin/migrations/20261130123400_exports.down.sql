drop table exports;
