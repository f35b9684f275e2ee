alter table domains
  drop constraint domains_dkim_next_whole,
  drop column dkim_next_created_at,
  drop column dkim_next_private_key_sealed,
  drop column dkim_next_public_key,
  drop column dkim_next_selector;
