/** The mail-send service's operations. */
import { AppError, requireService, tenantScope } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { SendChecks } from '../domain/checks';
import type { SesNotifications } from '../domain/ses-notifications';
import type { Suppressions } from '../domain/suppressions';

/** `ses` undefined: no SNS topic is configured, so no notification can be ours. */
export function mailSendHandlers(checks: SendChecks, suppressions: Suppressions, ses: SesNotifications | undefined): RpcHandlers<'mail-send'> {
  return {
    'mail-send.outbound.check': async (req, { auth }) => {
      requireService(auth);
      await checks.check(req);
      return {};
    },
    'mail-send.suppression.list': (req, { auth }) => suppressions.list(tenantScope(auth), req),
    'mail-send.suppression.add': (req, { auth }) => suppressions.add(tenantScope(auth), req.address),
    'mail-send.suppression.delete': async (req, { auth }) => {
      await suppressions.remove(tenantScope(auth), req.address);
      return {};
    },
    'mail-send.ses.notification': async (req, { log }) => {
      if (!ses) throw new AppError('not_found', 'SES notifications are not accepted here: SES_SNS_TOPIC_ARNS is not set');
      await ses.receive(req.body, log);
      return {};
    },
  };
}
