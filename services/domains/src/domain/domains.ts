/**
 * Custom domains of a tenant: adding one (its name checked, a DKIM key pair made for it, the
 * organization's plan counted), listing, reading, deleting (refused while inboxes use it), and
 * checking its records now (the route `verify`; the job, verification-job.ts, checks the same
 * way). A check reads DNS outside any transaction, then records its results in one: the row
 * locked, the state machine applied (verification.ts), `domain.verified` and the fact written
 * to the outbox with the change. A check older than the last one recorded is dropped, so a
 * slow job's check cannot undo a newer verify; a domain deleted meanwhile records nothing.
 */
import { z } from 'zod';
import {
  AppError,
  BOUNCE_LABEL,
  RECORD_KINDS,
  RECORD_REASONS,
  RECORD_STATUSES,
  checkRoomForOneMore,
  encodePageToken,
  idSchema,
  newId,
  pageCursor,
  type Domain,
  type DomainStatus,
  type Fact,
  type RecordKind,
  type SigningKey,
  type Tenant,
  auditEntryOf,
  type AuditedCall,
} from '@mailroom/contracts';
import type { Clock, Logger } from '@mailroom/platform';
import type { DomainRepository, DomainRow, PromotedKey } from '../repo/domain.repository';
import type { DomainsTx } from '../repo/tables';
import { checkRecords } from './dns-check';
import { normalizeDomainName } from './domain-name';
import type { DeletedEnvironments, DnsLookup, DomainAnnouncements, InboxesOnDomain, MakeDkimKey, PlanLimitsPort, Sealer, Transact } from './ports';
import { recordsOf, type Checks, type DomainKeys, type RecordSettings } from './records';
import { routeOf } from './routing';
import { nextState, reasonOf, rotationRecheckMs, type Schedule } from './verification';

const cursor = z.object({ before: idSchema('domain') });

const storedCheck = z.object({
  status: z.enum(RECORD_STATUSES).exclude(['pending']),
  reason: z.enum(RECORD_REASONS).nullable(),
  found: z.array(z.string()),
  checked_at: z.string(),
  advice: z.string().optional(),
  error: z.string().optional(),
});
const storedChecks = z.partialRecord(z.enum(RECORD_KINDS), storedCheck);

/** The stored checks of a row; anything unreadable counts as not checked. */
export function checksOf(row: Pick<DomainRow, 'checks'>): Checks {
  const parsed = storedChecks.safeParse(row.checks);
  return parsed.success ? parsed.data : {};
}

export function toDomain(row: DomainRow, settings: RecordSettings): Domain {
  const checks = checksOf(row);
  const status = (kind: RecordKind) => checks[kind]?.status ?? 'pending';
  return {
    domain_id: row.id,
    domain_name: row.name,
    verification_status: row.status,
    spf_status: status('spf'),
    dkim_status: status('dkim'),
    dmarc_status: status('dmarc'),
    mx_status: status('mx'),
    bounce_status: status('bounce'),
    failure_reason: row.status === 'verified' ? null : (row.failure_reason ?? reasonOf(checks)),
    records: recordsOf(keysOf(row), settings, checks),
    catch_all_inbox_id: row.catch_all_inbox_id,
    created_at: row.created_at.toISOString(),
    verified_at: row.verified_at?.toISOString() ?? null,
    last_checked_at: row.last_checked_at?.toISOString() ?? null,
    next_check_at: row.next_check_at.toISOString(),
  };
}

/** A name as services pass it (from an address or a request): lower case, no trailing dot; stored names are so already. */
function bareName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/** `mr` and 8 random characters of the domain's id: one selector per domain, so two rows of one name never share a key's name. */
export function selectorOf(domainId: string): string {
  return `mr${domainId.slice(-8)}`;
}

/** A rotation's selector: `mr` and 8 random characters, never the current one's. */
export function nextSelectorOf(current: string): string {
  for (;;) {
    const selector = selectorOf(newId('domain'));
    if (selector !== current) return selector;
  }
}

/** The keys a domain's records name: the current one, and a rotation's while it is pending. */
export function keysOf(row: Pick<DomainRow, 'name' | 'dkim_selector' | 'dkim_public_key' | 'dkim_next_selector' | 'dkim_next_public_key'>): DomainKeys {
  return {
    name: row.name,
    dkimSelector: row.dkim_selector,
    dkimPublicKey: row.dkim_public_key,
    next: row.dkim_next_selector && row.dkim_next_public_key ? { selector: row.dkim_next_selector, publicKey: row.dkim_next_public_key } : null,
  };
}

/**
 * What a check means for a rotation: the rotation's record verified (the key it looked for
 * still the pending one) -> the new key's columns to write and its check as the DKIM check;
 * otherwise the checks as found (a `dkim_next` check only while a rotation is pending).
 */
export function rotationOutcome(
  row: Pick<DomainRow, 'dkim_next_selector' | 'dkim_next_public_key' | 'dkim_next_private_key_sealed'>,
  found: Checks,
  nextChecked: string | null,
): { checks: Checks; promoted?: PromotedKey } {
  const { dkim_next: next, ...rest } = found;
  if (!row.dkim_next_selector || !row.dkim_next_public_key || !row.dkim_next_private_key_sealed) return { checks: rest };
  // Looked for before this rotation started, or for another key: its result says nothing of this one.
  if (!next || nextChecked !== row.dkim_next_public_key) return { checks: rest };
  if (next.status !== 'verified') return { checks: { ...rest, dkim_next: next } };
  return {
    checks: { ...rest, dkim: next },
    promoted: {
      dkim_selector: row.dkim_next_selector,
      dkim_public_key: row.dkim_next_public_key,
      dkim_private_key_sealed: row.dkim_next_private_key_sealed,
      dkim_next_selector: null,
      dkim_next_public_key: null,
      dkim_next_private_key_sealed: null,
      dkim_next_created_at: null,
    },
  };
}

export interface DomainsDeps {
  transact: Transact;
  repo: Pick<DomainRepository, keyof DomainRepository>;
  deleted: DeletedEnvironments;
  plans: PlanLimitsPort;
  announce: DomainAnnouncements;
  inboxes: InboxesOnDomain;
  dns: DnsLookup;
  makeKey: MakeDkimKey;
  sealer: Sealer;
  clock: Clock;
  /** A verified domain that broke is logged at warn (the alert, until the admin service follows DOMAINS_FACTS). */
  log: Logger;
  settings: RecordSettings;
  schedule: Schedule;
  /** MAIL_DOMAIN: the platform's own, never a customer's. */
  ownDomain: string;
}

export class Domains {
  constructor(private readonly d: DomainsDeps) {}

  async create(t: Tenant, input: { domain_name: string }): Promise<Domain> {
    const name = normalizeDomainName(input.domain_name, this.d.ownDomain);
    // Asked before the transaction: no database connection waits on the bus or on key generation.
    const [{ plan, plans }, key] = await Promise.all([this.d.plans.of(t.org_id), this.d.makeKey()]);
    const id = newId('domain');
    const now = this.d.clock.now();
    const row = await this.d.transact(async (tx) => {
      await checkRoomForOneMore(plans, plan, 'domains', async () => {
        await this.d.repo.lockOrganization(t.org_id, tx);
        return this.d.repo.countInOrg(t.org_id, tx);
      });
      await this.d.repo.lockName(name, tx);
      if (await this.d.repo.verifiedElsewhere(name, t.org_id, tx)) {
        throw new AppError('conflict', `${name} is verified by another organization; it can be added here once that organization deletes it (or its DNS records stop pointing there)`);
      }
      const inserted = await this.d.repo.insert(
        {
          id,
          org_id: t.org_id,
          env_id: t.env_id,
          name,
          dkim_selector: selectorOf(id),
          dkim_public_key: key.publicKey,
          dkim_private_key_sealed: this.d.sealer.seal(key.privateKeyPem, id),
          created_at: now,
          // The job looks at a new domain at once: its owner may have published the records already.
          next_check_at: now,
        },
        tx,
      );
      if (inserted === 'environment_deleted') throw AppError.notFound('environment');
      if (inserted === 'name_taken') throw new AppError('conflict', `${name} is already a domain of this environment`);
      return this.d.repo.find(t, id, tx);
    });
    if (!row) throw new AppError('internal_error', 'the domain just added could not be read back');
    return toDomain(row, this.d.settings);
  }

  async get(t: Tenant, id: string): Promise<Domain> {
    const row = await this.d.repo.find(t, id);
    if (!row) throw AppError.notFound('domain');
    return toDomain(row, this.d.settings);
  }

  async list(t: Tenant, q: { limit: number; page_token?: string | undefined }): Promise<{ data: Domain[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.d.repo.list(t, q.limit + 1, before);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map((r) => toDomain(r, this.d.settings)), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /**
   * Deletes the domain and its key, unless inboxes use it (409 naming them: deleting them is
   * deleting their mail, which a caller does inbox by inbox, knowingly).
   */
  async delete(t: Tenant, id: string, call: AuditedCall): Promise<void> {
    const row = await this.d.repo.find(t, id);
    if (!row) throw AppError.notFound('domain');
    const inUse = await this.d.inboxes.list(t.org_id, t.env_id, row.name);
    if (inUse.total > 0) {
      const named = inUse.data.map((i) => i.address).join(', ');
      const more = inUse.total > inUse.data.length ? ` and ${inUse.total - inUse.data.length} more` : '';
      throw new AppError('conflict', `${row.name} is used by ${inUse.total} inbox${inUse.total === 1 ? '' : 'es'} (${named}${more}); delete them first`, {
        details: inUse.data.map((i) => ({ path: 'inboxes', message: `${i.inbox_id} ${i.address}` })),
      });
    }
    await this.d.transact(async (tx) => {
      const gone = await this.d.repo.delete(t, id, tx);
      if (!gone) throw AppError.notFound('domain');
      await this.announceDeleted(tx, gone);
      const entry = auditEntryOf(call, this.d.clock.now(), { action: 'domain.deleted', org_id: t.org_id, target: { type: 'domain', id }, details: { name: gone.name, env_id: t.env_id } });
      await this.d.announce.audit(tx, entry);
    });
    this.d.announce.kick();
  }

  /** Checks the records now and answers the domain as it then is. */
  async verify(t: Tenant, id: string): Promise<Domain> {
    const row = await this.d.repo.find(t, id);
    if (!row) throw AppError.notFound('domain');
    const after = await this.check(row);
    // Deleted while its records were looked up.
    if (!after) throw AppError.notFound('domain');
    return toDomain(after, this.d.settings);
  }

  /** One check of a domain's records, recorded; undefined when the domain is gone. The job calls it too. */
  async check(row: DomainRow): Promise<DomainRow | undefined> {
    const startedAt = this.d.clock.now();
    const keys = keysOf(row);
    const checks = await checkRecords(this.d.dns, keys, this.d.settings, startedAt);
    return this.record(row.id, checks, startedAt, keys.next?.publicKey ?? null);
  }

  /**
   * `nextChecked`: the rotation's key the check looked for (null: none). Its record verified
   * and the rotation still pending with that key: the key becomes the current one (its check
   * the DKIM check), and the fact `dkim_rotated` tells mail-send to fetch it.
   */
  private async record(id: string, found: Checks, checkedAt: Date, nextChecked: string | null): Promise<DomainRow | undefined> {
    const result = await this.d.transact(async (tx) => {
      const row = await this.d.repo.lockById(id, tx);
      if (!row) return { row: undefined, announced: false };
      // A newer check was recorded while this one looked things up: it stands.
      if (row.last_checked_at && row.last_checked_at.getTime() >= checkedAt.getTime()) return { row, announced: false };
      const { checks, promoted } = rotationOutcome(row, found, nextChecked);
      const requiredVerified = checks.spf?.status === 'verified' && checks.dkim?.status === 'verified';
      let claimedElsewhere = false;
      if (requiredVerified && row.status !== 'verified') {
        await this.d.repo.lockName(row.name, tx);
        claimedElsewhere = await this.d.repo.verifiedElsewhere(row.name, row.org_id, tx);
      }
      const now = this.d.clock.now();
      const outcome = nextState(
        { status: row.status, consecutive_failures: row.consecutive_failures, verified_at: row.verified_at, announced: row.verified_event_id !== null },
        checks,
        now,
        this.d.schedule,
        claimedElsewhere,
      );
      const eventId = outcome.emitVerified ? newId('event') : undefined;
      const saved = await this.d.repo.recordCheck(
        id,
        {
          status: outcome.status,
          failure_reason: outcome.failure_reason,
          verified_at: outcome.verified_at,
          last_checked_at: checkedAt,
          next_check_at: outcome.next_check_at,
          consecutive_failures: outcome.consecutive_failures,
          checks: JSON.stringify(checks),
          ...(eventId ? { verified_event_id: eventId } : {}),
          ...(promoted ?? {}),
          // A rotation still pending is looked for sooner than the outcome alone says.
          ...(!promoted && row.dkim_next_created_at
            ? { next_check_at: new Date(Math.min(outcome.next_check_at.getTime(), now.getTime() + rotationRecheckMs(row.dkim_next_created_at, now, this.d.schedule))) }
            : {}),
        },
        tx,
      );
      if (!saved) return { row: undefined, announced: false };
      if (eventId) {
        await this.d.announce.event(tx, {
          id: eventId,
          type: 'domain.verified',
          timestamp: now.toISOString(),
          org_id: saved.org_id,
          env_id: saved.env_id,
          data: {
            domain_id: saved.id,
            domain_name: saved.name,
            verification_status: 'verified',
            spf_status: checks.spf?.status ?? 'pending',
            dkim_status: checks.dkim?.status ?? 'pending',
            dmarc_status: checks.dmarc?.status ?? 'pending',
            verified_at: now.toISOString(),
          },
        });
      }
      if (outcome.fact) await this.d.announce.changed(tx, newId('event'), this.factOf(saved, outcome.fact, now));
      if (promoted) await this.d.announce.changed(tx, newId('event'), this.factOf(saved, 'dkim_rotated', now));
      return { row: saved, announced: eventId !== undefined || outcome.fact !== null || promoted !== undefined, broke: outcome.fact === 'unverified' };
    });
    if (result.announced) this.d.announce.kick();
    if ('broke' in result && result.broke && result.row) {
      this.d.log.warn({ alert: 'domain_unverified', domain_id: id, org_id: result.row.org_id, env_id: result.row.env_id, failure_reason: result.row.failure_reason }, 'a verified custom domain no longer verifies');
    }
    return result.row;
  }

  /**
   * Sets the catch-all: an inbox on this domain in this environment (an inbox of another
   * domain is a 422, one not in this environment a 404), or null to refuse unknown addresses
   * at RCPT again. One catch-all per name: another environment's domain of the name holding one
   * is a 409. mail-ingest learns it from the fact, written with the change.
   */
  async setCatchAll(t: Tenant, id: string, inboxId: string | null): Promise<Domain> {
    const row = await this.d.repo.find(t, id);
    if (!row) throw AppError.notFound('domain');
    let address: string | null = null;
    if (inboxId) {
      const inbox = await this.d.inboxes.ofEnvironment(t.org_id, t.env_id, inboxId);
      if (!inbox) throw AppError.notFound('inbox');
      if (inbox.domain !== row.name) {
        throw new AppError('unprocessable', `${inbox.address} is not on ${row.name}: a catch-all is an inbox of the domain`, { details: [{ path: 'inbox_id', message: `an inbox on ${inbox.domain}` }] });
      }
      address = inbox.address;
    }
    const saved = await this.d.transact(async (tx) => {
      await this.d.repo.lockName(row.name, tx);
      if (inboxId && (await this.d.repo.catchAllElsewhere(row.name, t.org_id, id, tx))) {
        throw new AppError('conflict', `another environment's ${row.name} has a catch-all; clear it there first (one catch-all per name)`);
      }
      const updated = await this.d.repo.setCatchAll(t, id, { catch_all_inbox_id: inboxId, catch_all_address: address }, tx);
      if (!updated) throw AppError.notFound('domain');
      await this.d.announce.changed(tx, newId('event'), this.factOf(updated, 'catch_all_changed', this.d.clock.now()));
      return updated;
    });
    this.d.announce.kick();
    return toDomain(saved, this.d.settings);
  }

  /** For mail-ingest: whether mail for the name is taken, and where its unknown addresses go (routing.ts). */
  /** For auth: the names among these that are verified (now), with the organization of each; names are compared as stored (lower case, A-labels). */
  async verifiedNames(names: readonly string[], orgId?: string): Promise<{ data: { name: string; org_id: string }[] }> {
    return { data: await this.d.repo.verifiedNames([...new Set(names.map((n) => bareName(n)))], orgId) };
  }

  async route(name: string): Promise<{ served: boolean; catch_all_address: string | null; org_ids: string[] }> {
    return routeOf(await this.d.repo.servedRows(bareName(name)));
  }

  /** For mailbox: the environment's domain of that name, as inboxes need it (404 when it has none). */
  async status(t: Tenant, name: string): Promise<{ domain_id: string; domain_name: string; verification_status: DomainStatus; failure_reason: string | null }> {
    const row = await this.d.repo.findByName(t, bareName(name));
    if (!row) throw AppError.notFound('domain');
    const domain = toDomain(row, this.d.settings);
    return { domain_id: domain.domain_id, domain_name: domain.domain_name, verification_status: domain.verification_status, failure_reason: domain.failure_reason };
  }

  /**
   * A new DKIM key pair with a new selector, beside the current key, which keeps signing until
   * a check finds the new record (then it replaces it: `record`). One rotation at a time: a
   * second while one is pending is a 409 (its record may be published already; replacing it
   * would make that work void). Checked again soon (rotationRecheckMs).
   */
  async rotateDkim(t: Tenant, id: string): Promise<Domain> {
    const row = await this.d.repo.find(t, id);
    if (!row) throw AppError.notFound('domain');
    if (row.dkim_next_selector) throw this.rotationPending(row);
    const key = await this.d.makeKey();
    const now = this.d.clock.now();
    const rotated = await this.d.repo.startRotation(t, id, {
      dkim_next_selector: nextSelectorOf(row.dkim_selector),
      dkim_next_public_key: key.publicKey,
      dkim_next_private_key_sealed: this.d.sealer.seal(key.privateKeyPem, id),
      dkim_next_created_at: now,
      next_check_at: new Date(Math.min(row.next_check_at.getTime(), now.getTime() + this.d.schedule.backoffBaseMs)),
    });
    if (rotated) return toDomain(rotated, this.d.settings);
    // Deleted, or rotated by another request, since it was read.
    const again = await this.d.repo.find(t, id);
    if (!again) throw AppError.notFound('domain');
    throw this.rotationPending(again);
  }

  private rotationPending(row: DomainRow): AppError {
    return new AppError(
      'conflict',
      `a DKIM rotation of ${row.name} is pending: publish the TXT record ${row.dkim_next_selector}._domainkey.${row.name} (the domain's records, kind dkim_next) and verify; the new key signs from then, and another rotation can start`,
    );
  }

  /**
   * For mail-send (services only): the domain of an environment named `domain_name`, with the
   * key that signs now (sealed: mail-send opens it with the same SECRETS_ENCRYPTION_KEY) and
   * the bounce name to use; 404 when the environment has no such domain.
   */
  async signingKey(req: { org_id: string; env_id: string; domain_name: string }): Promise<SigningKey> {
    const row = await this.d.repo.findByName({ org_id: req.org_id, env_id: req.env_id }, bareName(req.domain_name));
    if (!row) throw AppError.notFound('domain');
    const checks = checksOf(row);
    return {
      domain_id: row.id,
      domain_name: row.name,
      status: row.status,
      failure_reason: row.status === 'verified' ? null : (row.failure_reason ?? reasonOf(checks)),
      selector: row.dkim_selector,
      private_key_sealed: row.dkim_private_key_sealed.toString('base64'),
      bounce_domain: checks.bounce?.status === 'verified' ? `${BOUNCE_LABEL}.${row.name}` : null,
    };
  }

  /** Live domains of one environment (an environment is deleted only without any). */
  async countInEnvironment(t: Tenant): Promise<{ count: number }> {
    return { count: await this.d.repo.countIn(t) };
  }

  /** Custom domains of the whole platform failing verification, checked since: for admin's alerts. */
  async countFailed(since: string): Promise<{ count: number }> {
    return { count: await this.d.repo.countFailedSince(new Date(since)) };
  }

  /** What the organization holds, every environment: for its usage. */
  async usage(orgId: string): Promise<{ domains: number }> {
    return { domains: await this.d.repo.countInOrg(orgId) };
  }

  /**
   * Orgs deleted an environment: its domains are deleted with the record of the deletion, in
   * one transaction (one added before it is deleted, one after is refused). A fact read again
   * deletes nothing.
   */
  async environmentDeleted(fact: Fact<'internal.orgs.environment.deleted'>): Promise<{ removed: number }> {
    const removed = await this.d.transact(async (tx) => {
      await this.d.deleted.record(tx, { org_id: fact.org_id, env_id: fact.env_id, deleted_at: new Date(fact.deleted_at) });
      const rows = await this.d.repo.deleteAllIn({ org_id: fact.org_id, env_id: fact.env_id }, tx);
      for (const row of rows) await this.announceDeleted(tx, row);
      return rows.length;
    });
    if (removed > 0) this.d.announce.kick();
    return { removed };
  }

  private async announceDeleted(tx: DomainsTx, row: DomainRow): Promise<void> {
    await this.d.announce.changed(tx, newId('event'), this.factOf(row, 'deleted', this.d.clock.now()));
  }

  private factOf(row: DomainRow, state: Fact<'internal.domains.domain.changed'>['state'], at: Date): Fact<'internal.domains.domain.changed'> {
    return { org_id: row.org_id, env_id: row.env_id, domain_id: row.id, domain_name: row.name, state, changed_at: at.toISOString() };
  }
}
