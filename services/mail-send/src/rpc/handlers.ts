/** The mail-send service's operations. */
import { AppError, isTenant, type AuthContext } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { SendChecks } from '../domain/checks';
import type { SesNotifications } from '../domain/ses-notifications';
import type { Suppressions, Tenant } from '../domain/suppressions';

function tenantOf(auth: AuthContext): Tenant {
  if (!isTenant(auth)) throw new AppError('unauthorized', 'this operation needs a user or API key credential');
  return { org_id: auth.org_id, env_id: auth.env_id };
}

/** `ses` undefined: no SNS topic is configured, so no notification can be ours. */
export function sendHandlers(checks: SendChecks, suppressions: Suppressions, ses: SesNotifications | undefined): RpcHandlers<'send'> {
  return {
    'send.outbound.check': async (req, { auth }) => {
      if (auth.kind !== 'service') throw new AppError('forbidden', 'internal operation');
      await checks.check(req);
      return {};
    },
    'send.suppression.list': (req, { auth }) => suppressions.list(tenantOf(auth), req),
    'send.suppression.add': (req, { auth }) => suppressions.add(tenantOf(auth), req.address),
    'send.suppression.delete': async (req, { auth }) => {
      await suppressions.remove(tenantOf(auth), req.address);
      return {};
    },
    'send.ses.notification': async (req, { log }) => {
      if (!ses) throw new AppError('not_found', 'SES notifications are not accepted here: SES_SNS_TOPIC_ARNS is not set');
      await ses.receive(req.body, log);
      return {};
    },
  };
}
