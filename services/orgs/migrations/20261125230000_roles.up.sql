-- The viewer role (reads only), and exactly one owner per organization.
alter table members drop constraint members_role_check;
alter table members add constraint members_role_check check (role in ('owner', 'admin', 'member', 'viewer'));
create unique index members_one_owner on members (org_id) where role = 'owner';
