-- SES notifications name the message by the provider's id when they carry no tag of ours.
create index sends_by_provider_id on sends (provider, provider_message_id) where provider_message_id is not null;
