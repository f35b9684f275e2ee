drop table mfa_challenges;
drop table mfa_recovery_codes;
drop table mfa_totp;
