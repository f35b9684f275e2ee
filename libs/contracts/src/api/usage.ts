/**
 * HTTP and RPC shapes of an organization's usage (GET /api/v1/org/usage): what it holds
 * against its plan's limits and the mail of the current period, each counted by the service
 * that owns it (the mail by the metrics service, from its rollups of the events) (docs/decisions.md, "Usage").
 */
import { z } from 'zod';
import { idSchema } from '../ids';
import { planSchema } from '../plans';
import { isoTimestamp } from '../time';

const count = z.number().int().nonnegative();

/** A period of usage, start included, end excluded. */
export const usagePeriod = z.object({
  start: isoTimestamp.describe('First instant of the period, included: 00:00:00.000 UTC on the first day of the current month'),
  end: isoTimestamp.describe('First instant after the period, excluded: 00:00:00.000 UTC on the first day of the next month'),
});

/** For services: one organization (all its environments) and a period, start before end. */
export const usageCountRequest = usagePeriod
  .extend({ org_id: idSchema('organization') })
  .refine((p) => Date.parse(p.start) < Date.parse(p.end), { message: 'start must be before end', path: ['end'] });
/** For services: one organization, all its environments. */
export const usageOrgRequest = z.object({ org_id: idSchema('organization') });

/** What mailbox counts: live inboxes (the period's messages are the metrics service's: metricsUsage). */
export const mailboxUsage = z.object({ inboxes: count });
/** What webhooks counts: endpoints, disabled ones included. */
export const webhooksUsage = z.object({ webhook_endpoints: count });

const limit = count.nullable().describe('What the plan allows; null: no limit');
const held = (what: string) => z.object({ used: count.describe(what), limit });
const inPeriod = (what: string) => z.object({ used: count.describe(`${what}, in the period`), limit });

export const orgUsage = z.object({
  org_id: idSchema('organization'),
  plan: planSchema.describe('The plan whose limits apply'),
  period: usagePeriod.describe('The current calendar month in UTC; messages are counted in it, the rest is counted now'),
  usage: z.object({
    inboxes: held('Inboxes of every environment (paused ones included, deleted ones not)'),
    domains: held('Custom domains of every environment, verified or not'),
    members: held('Members, and invitations not yet accepted (pending and unexpired), as the plan counts them').extend({
      pending_invitations: count.describe('Of used: invitations not yet accepted'),
    }),
    environments: held('Environments, the default one included'),
    webhook_endpoints: held('Webhook endpoints of every environment (disabled ones included)'),
    messages_sent: inPeriod('Messages the mail provider accepted (each announced by message.sent; refused sends and mail that never left are not counted), one per message whatever its recipients'),
    messages_received: inPeriod('Messages stored in an inbox that passed the spam check (each announced by message.received; spam is not counted), one per recipient inbox'),
  }),
  generated_at: isoTimestamp.describe('When these counts were read'),
});
export type OrgUsage = z.infer<typeof orgUsage>;
