/**
 * orgs' answer to `orgs.organization.limits`, played by the tests identity for tests and
 * benchmarks that run webhooks or mailbox without orgs (their tenants are made up, so orgs
 * would not know them): every organization is on the plan `answer` says, by default the
 * enterprise plan, which limits nothing. Stops with the bus's drain, or with `stop()`.
 */
import { DEFAULT_PLAN_LIMITS, rpcSubject, type OrganizationLimits } from '@mailroom/contracts';
import { encodeJson, type Bus } from '@mailroom/messaging';

export const UNLIMITED: OrganizationLimits = { plan: 'enterprise', limits: DEFAULT_PLAN_LIMITS.enterprise, plans: DEFAULT_PLAN_LIMITS };

export function standInPlanLimits(bus: Bus, answer: OrganizationLimits = UNLIMITED): { stop(): Promise<void> } {
  const sub = bus.nc.subscribe(bus.ns.subject(rpcSubject('orgs.organization.limits')), {
    queue: bus.ns.queue('orgs'),
    callback: (err, msg) => {
      if (!err && msg.reply) msg.respond(encodeJson(answer));
    },
  });
  return { stop: () => sub.drain() };
}
