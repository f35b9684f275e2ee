-- The platform operator's surface (issue 28). Admin keys: `mra_` + 43 base62 characters,
-- stored as SHA-256 only (256 bits of entropy: a fast hash cannot be brute-forced), shown once.
-- Whether a key acts (not revoked, not expired) is the domain code's rule (src/domain/admin-keys.ts).
create table admin_keys (
  id text primary key,
  name text not null,
  key_hash text not null unique,
  key_prefix text not null,
  -- The admin key that made it; null: made by the command (cli.js create-key).
  created_by text,
  created_at timestamptz not null,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
