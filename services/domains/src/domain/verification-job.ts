/**
 * The verification job: every instance runs one. Each round takes the domains whose next
 * check is due under a lease (FOR UPDATE SKIP LOCKED, so instances share the work and no
 * domain is checked by two at once), checks each (domains.ts `check`, which records the
 * results and clears the lease), and gives back the lease of a check that failed outright, so
 * the domain is taken again at the next round rather than after the lease.
 */
import { Rounds, type Clock, type Logger } from '@mailroom/platform';
import type { DomainRepository, DomainRow } from '../repo/domain.repository';

export interface VerificationJobOptions {
  /** This instance's name in the leases. */
  owner: string;
  intervalMs: number;
  /** How long a taken domain stays this instance's: longer than a check can take. */
  leaseMs: number;
  /** Domains taken per round, and checked at once. */
  batch: number;
}

export class VerificationJob {
  private readonly rounds: Rounds;

  constructor(
    private readonly domains: { check(row: DomainRow): Promise<unknown> },
    private readonly repo: Pick<DomainRepository, 'claimDue' | 'release'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: VerificationJobOptions,
  ) {
    // A full batch: more may be due at once.
    const round = async () => (await this.round()) >= this.opts.batch;
    this.rounds = new Rounds(round, (err) => this.log.warn({ err }, 'domain verification round failed; retried at the next one'), this.opts.intervalMs);
  }

  start(): void {
    this.rounds.start();
  }

  /** A round soon (one at a time per instance). */
  kick(): void {
    this.rounds.kick();
  }

  /** One round: the due domains taken and checked; how many were taken. */
  async round(): Promise<number> {
    const now = this.clock.now();
    const rows = await this.repo.claimDue(this.opts.owner, now, new Date(now.getTime() + this.opts.leaseMs), this.opts.batch);
    await Promise.all(
      rows.map(async (row) => {
        try {
          await this.domains.check(row);
        } catch (err) {
          this.log.warn({ err, domain_id: row.id }, 'domain check failed; the domain is taken again at the next round');
          await this.repo.release(row.id, this.opts.owner).catch(() => undefined);
        }
      }),
    );
    return rows.length;
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
  }
}
