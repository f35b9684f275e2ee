-- paused: the organization's sending is refused (account_paused); mail still arrives.
alter table organizations add column status text not null default 'active' check (status in ('active', 'paused'));
