-- An organization's messages received are counted by the metrics service from its rollups
-- (GET /api/v1/org/usage asks metrics.usage.count): nothing reads this index any more, and
-- every inbound message paid for its upkeep.
drop index if exists messages_received_by_org;
