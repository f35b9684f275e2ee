/**
 * Messages an organization sent, for its usage (orgs asks, for GET /api/v1/org/usage).
 *
 * Sent means handed to the provider and accepted by it: what message.sent announces, counted
 * by when it was accepted, so the count matches the events (the metrics service's rollups of
 * them will replace it). Not counted: a send refused before it left (message.rejected: it
 * never reaches this service), one the provider refused for good or that was given up after
 * its retries (a bounce without an acceptance), one still waiting for its hand-over, and the
 * platform's own mail (invitations: system_mails, no organization's). Counted: an accepted
 * send that bounces or is complained about later. One per message, whatever its recipients.
 */
import type { SendRepository } from '../repo/send.repository';

/** Start included, end excluded. */
export interface Period {
  start: Date;
  end: Date;
}

export class SendUsage {
  constructor(private readonly repo: Pick<SendRepository, 'countAccepted'>) {}

  /** Every environment of the organization. */
  async count(orgId: string, period: Period): Promise<{ messages_sent: number }> {
    return { messages_sent: await this.repo.countAccepted(orgId, period.start, period.end) };
  }
}
