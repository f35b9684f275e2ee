/** HTTP and RPC shapes of upgrade requests (an organization asking for another plan) and of an organization's limits. */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { planLimitsSchema, planSchema, planTableSchema } from '../plans';
import { isoTimestamp } from '../time';

export const UPGRADE_REQUEST_MESSAGE_MAX = 2000;
export const UPGRADE_DECISION_NOTE_MAX = 2000;

/**
 * A request to move the organization to another plan. `pending` until a platform operator
 * approves it (the organization is then on `plan`) or declines it; one pending at a time.
 */
export const upgradeRequest = z.object({
  id: idSchema('upgradeRequest'),
  org_id: idSchema('organization'),
  /** The plan asked for. */
  plan: planSchema,
  /** The plan the organization was on when it asked. */
  current_plan: planSchema,
  message: z.string().nullable(),
  status: z.enum(['pending', 'approved', 'declined']),
  /** The user who asked. */
  requested_by: idSchema('user'),
  created_at: isoTimestamp,
  decided_at: isoTimestamp.nullable(),
  /** What the operator said with the decision. */
  decision_note: z.string().nullable(),
});
export type UpgradeRequest = z.infer<typeof upgradeRequest>;

/** An empty or blank message is no message. */
const text = (max: number, what: string) =>
  z
    .string()
    .trim()
    .max(max, `${what} has at most ${max} characters`)
    .transform((v) => (v === '' ? undefined : v));

export const upgradeRequestCreateBody = z.strictObject({
  plan: planSchema,
  message: text(UPGRADE_REQUEST_MESSAGE_MAX, 'a message').optional(),
});
export const upgradeRequestId = z.object({ id: idSchema('upgradeRequest') });
export const upgradeRequestList = pageOf(upgradeRequest);

/** A platform operator's decision (admin context only). */
/** An operator's decision (POST /api/v1/admin/upgrade-requests/{id}/decision). */
export const upgradeDecisionBody = z.strictObject({
  decision: z.enum(['approve', 'decline']),
  note: text(UPGRADE_DECISION_NOTE_MAX, 'a note').optional(),
});
export const upgradeDecisionRequest = upgradeDecisionBody.extend({ id: idSchema('upgradeRequest') });

/** An operator's list of every organization's requests (GET /api/v1/admin/upgrade-requests), newest first. */
export const upgradeRequestAdminQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  page_token: z.string().min(1).max(512).optional(),
  status: z.enum(['pending', 'approved', 'declined']).optional(),
  org_id: idSchema('organization').optional(),
});

/** For services only: an organization's plan, its limits, and the whole table (to name the plan that lifts a limit). */
export const organizationLimits = z.object({
  plan: planSchema,
  limits: planLimitsSchema,
  plans: planTableSchema,
});
export type OrganizationLimits = z.infer<typeof organizationLimits>;
