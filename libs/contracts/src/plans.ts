/**
 * Plans and what each lets an organization hold. The table is configuration: orgs, which owns
 * each organization's plan, reads `PLAN_<NAME>_LIMITS` over these defaults and answers an
 * organization's limits to the services that create the resources; each of them counts its
 * own and refuses the one too many with `plan_limit` (403), naming the plan that lifts it.
 * Messages are not capped by plan (sending has its rate limits; received mail is never
 * refused for a plan).
 */
import { z } from 'zod';
import { AppError } from './errors';

export const PLAN_NAMES = ['free', 'pro', 'enterprise'] as const;
export const planSchema = z.enum(PLAN_NAMES, {
  error: (issue) => (issue.input === undefined ? `give a plan: ${PLAN_NAMES.join(', ')}` : `unknown plan ${JSON.stringify(issue.input)}; plans are ${PLAN_NAMES.join(', ')}`),
});
export type PlanName = z.infer<typeof planSchema>;

export const PLAN_LIMIT_NAMES = ['inboxes', 'domains', 'members', 'environments', 'webhook_endpoints'] as const;
export type PlanLimitName = (typeof PLAN_LIMIT_NAMES)[number];

/** How many of each an organization may hold; null: no limit. */
export type PlanLimits = Record<PlanLimitName, number | null>;
export const planLimitsSchema = z.object(Object.fromEntries(PLAN_LIMIT_NAMES.map((n) => [n, z.number().int().min(0).nullable()])) as Record<PlanLimitName, z.ZodNullable<z.ZodNumber>>);

/** Every plan and its limits: `config.plans` of orgs, and what it answers to the services that count. */
export type PlanTable = Record<PlanName, PlanLimits>;
export const planTableSchema = z.object({ free: planLimitsSchema, pro: planLimitsSchema, enterprise: planLimitsSchema });

export const DEFAULT_PLAN_LIMITS: PlanTable = {
  free: { inboxes: 10, domains: 1, members: 3, environments: 2, webhook_endpoints: 5 },
  pro: { inboxes: 1_000, domains: 20, members: 50, environments: 10, webhook_endpoints: 50 },
  enterprise: { inboxes: null, domains: null, members: null, environments: null, webhook_endpoints: null },
};

/** The words of a limit (error messages, docs). */
const NOUNS: Record<PlanLimitName, string> = {
  inboxes: 'inboxes',
  domains: 'domains',
  members: 'members (pending invitations included)',
  environments: 'environments',
  webhook_endpoints: 'webhook endpoints',
};

/**
 * `PLAN_<NAME>_LIMITS` read over a plan's defaults: `inboxes=25,members=unlimited`; a limit
 * not named keeps its default. Throws a message naming the bad part.
 */
export function parsePlanLimits(text: string, defaults: PlanLimits): PlanLimits {
  const limits = { ...defaults };
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p.length > 0)) {
    const m = /^([a-z_]+)\s*=\s*(\d{1,9}|unlimited)$/.exec(part);
    if (!m) throw new Error(`"${part}" is not <limit>=<count> or <limit>=unlimited`);
    const name = m[1] as PlanLimitName;
    if (!PLAN_LIMIT_NAMES.includes(name)) throw new Error(`unknown limit "${m[1]}"; limits are ${PLAN_LIMIT_NAMES.join(', ')}`);
    limits[name] = m[2] === 'unlimited' ? null : Number(m[2]);
  }
  return limits;
}

/** Whether one more fits beside `held`. */
export function allowsOneMore(limits: PlanLimits, name: PlanLimitName, held: number): boolean {
  const max = limits[name];
  return max === null || held < max;
}

/**
 * The refusal of the one too many: 403 `plan_limit`, naming the limit, the plan and the
 * first plan after it that holds more (an upgrade request asks for it).
 */
export function planLimitError(table: Record<PlanName, PlanLimits>, plan: PlanName, name: PlanLimitName): AppError {
  const max = table[plan][name];
  const lifts = PLAN_NAMES.slice(PLAN_NAMES.indexOf(plan) + 1).find((p) => {
    const other = table[p][name];
    return other === null || (max !== null && other > max);
  });
  const more = (p: PlanName) => (table[p][name] === null ? 'has no limit' : `allows ${table[p][name]}`);
  const upgrade = lifts ? `; the ${lifts} plan ${more(lifts)}: ask for it with POST /api/v1/org/upgrade-request` : '';
  return new AppError('plan_limit', `the ${plan} plan allows ${max ?? 'any number of'} ${NOUNS[name]}${upgrade}`, { details: [{ path: name, message: `limit ${max ?? 'none'} on the ${plan} plan` }] });
}

/**
 * Refuses the one too many: `held` (called only when the plan has a limit, so an unlimited
 * plan counts nothing) is what the organization holds now, counted by the caller under a lock
 * on the organization so two creations at once cannot both see room for one more.
 */
export async function checkRoomForOneMore(table: PlanTable, plan: PlanName, name: PlanLimitName, held: () => Promise<number>): Promise<void> {
  if (table[plan][name] === null) return;
  if (!allowsOneMore(table[plan], name, await held())) throw planLimitError(table, plan, name);
}
