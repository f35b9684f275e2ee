/**
 * What an organization holds and received in mailbox, for its usage (orgs asks, for GET
 * /api/v1/org/usage), over every environment.
 *
 * - inboxes: live ones, paused included, deleted not (what the plan's limit counts);
 * - messages received: inbound messages stored in an inbox that passed the spam check (those
 *   message.received announced), counted by when the SMTP edge accepted them, so the count
 *   matches the events (the metrics service's rollups of them will replace it). Spam is stored
 *   but not announced, and not counted; a mail to two inboxes is two messages; mail of inboxes
 *   deleted since still counts; the copies of sent mail (outbound) are mail-send's to count.
 */
import type { InboxRepository } from '../repo/inbox.repository';
import type { MessageRepository } from '../repo/message.repository';

/** Start included, end excluded. */
export interface Period {
  start: Date;
  end: Date;
}

export class MailboxUsage {
  constructor(
    private readonly inboxes: Pick<InboxRepository, 'countLiveInOrg'>,
    private readonly messages: Pick<MessageRepository, 'countReceived'>,
  ) {}

  async count(orgId: string, period: Period): Promise<{ inboxes: number; messages_received: number }> {
    const [inboxes, received] = await Promise.all([this.inboxes.countLiveInOrg(orgId), this.messages.countReceived(orgId, period.start, period.end)]);
    return { inboxes, messages_received: received };
  }
}
