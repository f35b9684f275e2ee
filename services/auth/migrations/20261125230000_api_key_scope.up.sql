-- What a key may do: a named scope (full, read_only, send_only: resolved from the permission
-- table when the key is used, so a full key follows what a member may do), or custom with its
-- own list. Keys made before scopes existed could do everything a key could: full.
alter table api_keys add column scope text not null default 'full' check (scope in ('full', 'read_only', 'send_only', 'custom'));
alter table api_keys add column permissions text[] check ((scope = 'custom') = (permissions is not null));
