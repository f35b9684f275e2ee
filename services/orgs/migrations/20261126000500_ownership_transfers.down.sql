drop table ownership_transfers;
