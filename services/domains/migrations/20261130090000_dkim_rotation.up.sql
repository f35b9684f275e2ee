-- DKIM key rotation (issue 25, part 7): a rotation's new key pair waits here, beside the one
-- that signs, until a check finds its record published; it then replaces the current key
-- (src/domain/domains.ts) and these are cleared. Sealed like the current key (the domain id
-- as associated data). The four go together.
alter table domains
  add column dkim_next_selector text,
  add column dkim_next_public_key text,
  add column dkim_next_private_key_sealed bytea,
  -- When the rotation was asked for: its record is looked for often at first, then less.
  add column dkim_next_created_at timestamptz,
  add constraint domains_dkim_next_whole check (
    (dkim_next_selector is null) = (dkim_next_public_key is null)
    and (dkim_next_selector is null) = (dkim_next_private_key_sealed is null)
    and (dkim_next_selector is null) = (dkim_next_created_at is null)
  );
