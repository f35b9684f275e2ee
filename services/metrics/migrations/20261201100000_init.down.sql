drop table processed_events;
drop table hourly_latency;
drop table hourly_counts;
