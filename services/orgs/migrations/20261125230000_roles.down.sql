drop index members_one_owner;
delete from members where role = 'viewer';
alter table members drop constraint members_role_check;
alter table members add constraint members_role_check check (role in ('owner', 'admin', 'member'));
