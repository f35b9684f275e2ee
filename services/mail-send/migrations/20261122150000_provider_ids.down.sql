drop index if exists sends_by_provider_id;
