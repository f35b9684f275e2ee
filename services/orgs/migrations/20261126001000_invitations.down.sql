drop table invitations;
