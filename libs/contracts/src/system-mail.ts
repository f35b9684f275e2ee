/**
 * Mail from the platform itself (work queue `mail.system`, consumed by mail-send): a template
 * name, its data and one recipient. The caller says what happened and to whom; mail-send
 * composes the text and HTML from its templates and sends it from the system address it is
 * configured with (SYSTEM_MAIL_FROM on MAIL_DOMAIN), DKIM-signed: the sender identity is never
 * the caller's to choose.
 */
import { z } from 'zod';
import { emailAddress } from './address';
import { invitationToken } from './api/ownership';
import { emailVerificationToken, oneTimeCode, passwordResetToken } from './api/verification';
import { emailChangeToken } from './api/account-lifecycle';
import { idSchema } from './ids';
import { roleSchema } from './permissions';
import { isoTimestamp } from './time';

/** A person as a mail names them: their name, else their email. */
const person = z.string().min(1).max(320);
const orgName = z.string().min(1).max(200);

const transferFacts = z.object({
  transfer_id: idSchema('ownershipTransfer'),
  org_name: orgName,
  owner: person,
  new_owner: person,
  /** Who this copy is for: the owner who asked (`owner`) or the member asked (`new_owner`). */
  recipient: z.enum(['owner', 'new_owner']),
});

/** A code and a link, each with its own expiry (account mail). Secrets: sent once in the mail, never stored or logged by mail-send. */
const codeAndLink = <T extends z.ZodString>(token: T) =>
  z.object({
    code: oneTimeCode,
    code_expires_at: isoTimestamp,
    token,
    /** The token inside a link to the web app (APP_URL). */
    link: z.url({ protocol: /^https?$/ }),
    link_expires_at: isoTimestamp,
  });

/** Every template and the data it needs. */
export const SYSTEM_MAIL_TEMPLATES = {
  'ownership_transfer.requested': transferFacts.extend({ expires_at: isoTimestamp }),
  'ownership_transfer.accepted': transferFacts,
  'ownership_transfer.cancelled': transferFacts,
  invitation: z.object({
    invitation_id: idSchema('invitation'),
    org_name: orgName,
    inviter: person,
    role: roleSchema,
    /** Secret: sent once in the mail, never stored or logged by mail-send. */
    token: invitationToken,
    expires_at: isoTimestamp,
  }),
  // Account mail (auth, work queue mail.account).
  email_verification: codeAndLink(emailVerificationToken),
  password_reset: codeAndLink(passwordResetToken),
  /** A notice: the password was reset (by mail) or changed (signed in); every other session ended. */
  password_changed: z.object({ how: z.enum(['reset', 'change']), changed_at: isoTimestamp }),
  // Email change (to the new address: code and link; to the old one: a notice) and deletion and recovery notices.
  email_change: codeAndLink(emailChangeToken),
  email_change_requested: z.object({ new_email: emailAddress, requested_at: isoTimestamp }),
  account_deleted: z.object({ deleted_at: isoTimestamp, recover_before: isoTimestamp }),
  account_recovered: z.object({ recovered_at: isoTimestamp }),
  // Notices of the second factor and of sign-ins (auth, mail.account): what happened and when, never a secret.
  mfa_enabled: z.object({ enabled_at: isoTimestamp }),
  /** `with`: what proved it was the person (the password, or a code of the authenticator or a recovery code). */
  mfa_disabled: z.object({ disabled_at: isoTimestamp, with: z.enum(['password', 'authenticator', 'recovery_code']) }),
  mfa_recovery_codes_regenerated: z.object({ regenerated_at: isoTimestamp }),
  mfa_recovery_code_used: z.object({ used_at: isoTimestamp, codes_left: z.number().int().min(0) }),
  /** A session opened from a client (browser or program, and network) the account's sessions had not used in 90 days. */
  new_sign_in: z.object({
    signed_in_at: isoTimestamp,
    ip: z.string().max(64).nullable(),
    user_agent: z.string().max(512).nullable(),
    /** The client in words: "Firefox on Linux", "curl". */
    client: z.string().min(1).max(200),
    /** What proved it: the password, with a second-factor code, or an outside provider (OAuth). */
    with: z.enum(['password', 'password_and_mfa', 'provider', 'sso']),
  }),
  /** A notice: too many failed attempts at one secret of the account (`attempt`); they are refused until `locked_until`. */
  account_locked: z.object({
    attempt: z.enum(['login', 'password_reset', 'email_verification', 'mfa']),
    failures: z.number().int().positive(),
    locked_at: isoTimestamp,
    locked_until: isoTimestamp,
  }),
  /** To the platform's operators (admin, mail.admin): an alert started firing or cleared. */
  alert: z.object({
    key: z.string().min(1).max(64),
    description: z.string().max(500),
    notice: z.enum(['firing', 'resolved']),
    detail: z.string().max(2000),
    at: isoTimestamp,
  }),
} as const;
export type SystemMailTemplate = keyof typeof SYSTEM_MAIL_TEMPLATES;

const item = <T extends SystemMailTemplate>(template: T) =>
  z.object({
    /** Idempotency: one mail per id, however often the item is delivered. */
    id: idSchema('systemMail'),
    to: emailAddress,
    template: z.literal(template),
    data: SYSTEM_MAIL_TEMPLATES[template],
  });

/** What orgs queues (mail.system). */
export const systemMail = z.discriminatedUnion('template', [
  item('ownership_transfer.requested'),
  item('ownership_transfer.accepted'),
  item('ownership_transfer.cancelled'),
  item('invitation'),
]);
export type SystemMail = z.infer<typeof systemMail>;

/**
 * What auth queues (mail.account): a queue of its own, since a stored subject has one
 * publisher, so that no other service can have a verification or reset mail sent.
 */
export const accountMail = z.discriminatedUnion('template', [
  item('email_verification'),
  item('password_reset'),
  item('password_changed'),
  item('email_change'),
  item('email_change_requested'),
  item('account_deleted'),
  item('account_recovered'),
  item('mfa_enabled'),
  item('mfa_disabled'),
  item('mfa_recovery_codes_regenerated'),
  item('mfa_recovery_code_used'),
  item('new_sign_in'),
  item('account_locked'),
]);
export type AccountMail = z.infer<typeof accountMail>;

/** What admin queues (mail.admin): alerts to the operators (ALERT_EMAIL_TO), a queue of its own so no other service can send them. */
export const adminMail = z.discriminatedUnion('template', [item('alert')]);
export type AdminMail = z.infer<typeof adminMail>;

/** Any mail from the platform, as mail-send renders it. */
export type PlatformMail = SystemMail | AccountMail | AdminMail;
