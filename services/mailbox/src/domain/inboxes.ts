/**
 * Inboxes: an address on MAIL_DOMAIN or on a custom domain of the environment once the
 * domains service has it verified, unique case-insensitively across all tenants. A paused inbox still receives
 * mail; only its sending is refused (mail-send). A deleted inbox refuses mail at RCPT.
 * The organization's plan limits its live inboxes, all environments together: counted under
 * a lock on the organization in the transaction that adds the one more. When orgs deletes an
 * environment, its inboxes are deleted as one is (their mail goes with them), and no inbox is
 * created in it afterwards (404, as for any environment not there).
 */
import { AppError, INBOXES_ON_DOMAIN_SHOWN, checkRoomForOneMore, encodePageToken, pageCursor, idSchema, newId, randomBytes, type Fact, type Inbox, type Tenant } from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { InboxRepository, InboxRow } from '../repo/inbox.repository';
import type { CustomDomainsPort, DeletedEnvironments, PlanLimitsPort, Transact } from './ports';

const cursor = z.object({ before: idSchema('inbox') });
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function toInbox(row: InboxRow): Inbox {
  return {
    inbox_id: row.id,
    address: row.address,
    display_name: row.display_name,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** `agent-` and 10 random base32 characters: 50 bits, so collisions stay theoretical. */
export function generateUsername(): string {
  let out = 'agent-';
  for (const b of randomBytes(10)) out += ALPHABET[b & 31];
  return out;
}

export class Inboxes {
  constructor(
    private readonly repo: Pick<InboxRepository, keyof InboxRepository>,
    private readonly clock: Clock,
    private readonly mailDomain: string,
    private readonly transact: Transact,
    private readonly plans: PlanLimitsPort,
    private readonly deleted: DeletedEnvironments,
    private readonly domains: CustomDomainsPort,
  ) {}

  async create(t: Tenant, input: { username?: string | undefined; domain?: string | undefined; display_name?: string | undefined }): Promise<Inbox> {
    // Asked before the transaction: no database connection waits on the bus.
    const domain = await this.domainFor(t, input.domain);
    const { plan, plans } = await this.plans.of(t.org_id);
    const now = this.clock.now();
    return this.transact(async (trx) => {
      await checkRoomForOneMore(plans, plan, 'inboxes', async () => {
        await this.repo.lockOrganization(t.org_id, trx);
        return this.repo.countLiveInOrg(t.org_id, trx);
      });
      // A generated name is retried on the (unlikely) collision; a chosen one is a conflict.
      for (let attempt = 0; attempt < 3; attempt++) {
        const username = input.username ?? generateUsername();
        const row: Omit<InboxRow, 'deleted_at'> = {
          id: newId('inbox'),
          org_id: t.org_id,
          env_id: t.env_id,
          username,
          domain,
          address: `${username}@${domain}`,
          display_name: input.display_name ?? null,
          status: 'active',
          created_at: now,
          updated_at: now,
        };
        const inserted = await this.repo.insert(row, trx);
        if (inserted === 'inserted') return toInbox({ ...row, deleted_at: null });
        // A stale gateway (or one in the instant before orgs' fact arrives) may still let a request
        // act in an environment orgs deleted: the insert is refused once its deletion is recorded here.
        if (inserted === 'environment_deleted') throw AppError.notFound('environment');
        if (input.username) throw new AppError('conflict', `the address ${row.address} is taken; choose another username`);
      }
      throw new AppError('conflict', 'could not generate a free address; retry');
    });
  }

  /** MAIL_DOMAIN, or a custom domain of the environment that is verified now (422 otherwise, saying what to do). */
  private async domainFor(t: Tenant, asked: string | undefined): Promise<string> {
    const name = asked?.replace(/\.$/, '') ?? this.mailDomain;
    if (name === this.mailDomain) return name;
    const found = await this.domains.statusOf(t, name);
    if (!found) {
      throw new AppError('unprocessable', `${name} is not a domain of this environment: add it (POST /api/v1/domains) and verify it, or use ${this.mailDomain}`, {
        details: [{ path: 'domain', message: 'not a domain of this environment' }],
      });
    }
    if (found.verification_status !== 'verified') {
      const why = found.failure_reason ? ` (${found.failure_reason})` : '';
      throw new AppError('unprocessable', `${found.domain_name} is ${found.verification_status}${why}: inboxes on it can be created once it is verified (POST /api/v1/domains/{id}/verify checks now)`, {
        details: [{ path: 'domain', message: `domain ${found.verification_status}` }],
      });
    }
    return found.domain_name;
  }

  /** For domains: a live inbox of the environment, with its domain (a catch-all must be on the domain it serves). */
  async ofEnvironment(t: Tenant, id: string): Promise<{ inbox_id: string; address: string; domain: string }> {
    const row = await this.repo.find(t, id);
    if (!row) throw AppError.notFound('inbox');
    return { inbox_id: row.id, address: row.address, domain: row.domain };
  }

  /** How many live inboxes the environment holds (orgs asks before deleting an environment). */
  async count(t: Tenant): Promise<{ count: number }> {
    return { count: await this.repo.countLive(t) };
  }

  /** Live inboxes of the environment on a domain (the domains service deletes a domain only when none is left): the first few, and how many. */
  async onDomain(t: Tenant, domain: string): Promise<{ data: { inbox_id: string; address: string }[]; total: number }> {
    const [rows, total] = await Promise.all([this.repo.listLiveOnDomain(t, domain.toLowerCase(), INBOXES_ON_DOMAIN_SHOWN), this.repo.countLiveOnDomain(t, domain.toLowerCase())]);
    return { data: rows.map((r) => ({ inbox_id: r.id, address: r.address })), total };
  }

  async get(t: Tenant, id: string): Promise<Inbox> {
    const row = await this.repo.find(t, id);
    if (!row) throw AppError.notFound('inbox');
    return toInbox(row);
  }

  async list(t: Tenant, q: { limit: number; page_token?: string | undefined }): Promise<{ data: Inbox[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.repo.list(t, q.limit + 1, before);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toInbox), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  async update(t: Tenant, id: string, input: { display_name?: string | null | undefined; status?: 'active' | 'paused' | undefined }): Promise<Inbox> {
    const set: Partial<Pick<InboxRow, 'display_name' | 'status'>> = {};
    if (input.display_name !== undefined) set.display_name = input.display_name;
    if (input.status !== undefined) set.status = input.status;
    const row = await this.repo.update(t, id, set, this.clock.now());
    if (!row) throw AppError.notFound('inbox');
    return toInbox(row);
  }

  async resume(t: Tenant, id: string): Promise<Inbox> {
    return this.update(t, id, { status: 'active' });
  }

  async delete(t: Tenant, id: string): Promise<void> {
    if (!(await this.repo.softDelete(t, id, this.clock.now()))) throw AppError.notFound('inbox');
  }

  /**
   * Orgs deleted an environment: its live inboxes are deleted with the record of the deletion,
   * in one transaction (an inbox created before it is deleted, one after is refused), as
   * `delete` deletes one. A fact read again deletes nothing.
   */
  async environmentDeleted(fact: Fact<'internal.orgs.environment.deleted'>): Promise<{ removed: number }> {
    const removed = await this.transact(async (trx) => {
      await this.deleted.record(trx, { org_id: fact.org_id, env_id: fact.env_id, deleted_at: new Date(fact.deleted_at) });
      return this.repo.softDeleteAllIn({ org_id: fact.org_id, env_id: fact.env_id }, this.clock.now(), trx);
    });
    return { removed: removed.length };
  }

  /** For the SMTP edge's RCPT check. */
  async resolve(address: string): Promise<{ inbox_id: string; org_id: string; env_id: string; address: string; status: 'active' | 'paused' }> {
    const row = await this.repo.findLiveByAddress(address.trim().toLowerCase());
    if (!row) throw AppError.notFound('inbox');
    return { inbox_id: row.id, org_id: row.org_id, env_id: row.env_id, address: row.address, status: row.status };
  }
}
