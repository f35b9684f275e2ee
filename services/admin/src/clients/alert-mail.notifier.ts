/**
 * Tells the operators of an alert by mail: one item of work queue `mail.admin` per address of
 * ALERT_EMAIL_TO, which mail-send renders from its `alert` template and sends from the
 * system address. The item's id is its msgID: a notice published twice is mailed once.
 */
import { WORK, WORK_ITEMS, newId } from '@mailroom/contracts';
import { encodeJson, publishStored, type Bus } from '@mailroom/messaging';
import type { Logger } from '@mailroom/platform';
import type { AlertNotice, AlertNotifier } from '../domain/alerts';

export class AlertMailNotifier implements AlertNotifier {
  constructor(
    private readonly bus: Bus,
    private readonly to: readonly string[],
    private readonly log: Logger,
  ) {}

  async notify(n: AlertNotice): Promise<void> {
    for (const to of this.to) {
      const item = WORK_ITEMS[WORK.admin].parse({ id: newId('systemMail'), to, template: 'alert', data: n });
      try {
        await publishStored(this.bus, WORK.admin, encodeJson(item), { msgID: item.id });
      } catch (err) {
        this.log.error({ err, alert: n.key, notice: n.notice }, 'alert mail could not be queued');
      }
    }
  }
}
