-- An organization's messages sent are counted by the metrics service from its rollups
-- (GET /api/v1/org/usage asks metrics.usage.count, no longer mail-send.usage.count): nothing
-- reads this index any more, and every accepted send paid for its upkeep.
drop index if exists sends_sent_by_org;
