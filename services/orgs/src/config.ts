import { z } from 'zod';
import { DEFAULT_PLAN_LIMITS, parsePlanLimits, type PlanLimits, type PlanName } from '@mailroom/contracts';
import { envString, parseConfig, type Env } from '@mailroom/platform';
import { baseEnv } from '@mailroom/runtime';

/** `PLAN_<NAME>_LIMITS`: `inboxes=25,members=unlimited` over the plan's defaults (contracts plans.ts). */
function planLimits(plan: PlanName) {
  return envString('').transform((text, ctx): PlanLimits => {
    try {
      return parsePlanLimits(text, DEFAULT_PLAN_LIMITS[plan]);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  });
}

export const orgsConfigSchema = z
  .object({
    ...baseEnv,
    PLAN_FREE_LIMITS: planLimits('free'),
    PLAN_PRO_LIMITS: planLimits('pro'),
    PLAN_ENTERPRISE_LIMITS: planLimits('enterprise'),
  })
  .transform((c) => ({ ...c, plans: { free: c.PLAN_FREE_LIMITS, pro: c.PLAN_PRO_LIMITS, enterprise: c.PLAN_ENTERPRISE_LIMITS } satisfies Record<PlanName, PlanLimits> }));
export type OrgsConfig = z.output<typeof orgsConfigSchema>;

export function loadConfig(env: Env): OrgsConfig {
  return parseConfig(orgsConfigSchema, env);
}
