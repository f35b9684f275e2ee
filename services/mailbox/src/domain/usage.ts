/**
 * What an organization holds in mailbox, for its usage (orgs asks, for GET /api/v1/org/usage),
 * over every environment: live inboxes, paused included, deleted not (what the plan's limit
 * counts). The messages it received are the metrics service's to count, from its rollups of
 * message.received.
 */
import type { InboxRepository } from '../repo/inbox.repository';

export class MailboxUsage {
  constructor(private readonly inboxes: Pick<InboxRepository, 'countLiveInOrg'>) {}

  async count(orgId: string): Promise<{ inboxes: number }> {
    return { inboxes: await this.inboxes.countLiveInOrg(orgId) };
  }
}
