/**
 * Upgrade requests: an organization asks for another plan, and a platform operator approves
 * (the organization is then on that plan) or declines it later. The rules:
 * - owners and admins ask (`org.manage`, people only: the request names who asked); anyone
 *   who reads the organization lists and reads its requests;
 * - one pending request per organization (a second: 409, by the unique index too); asking for
 *   the plan the organization is on is 409; a plan the table does not name is 400 (contracts);
 * - only an admin context decides; a decided request is not decided again (409); approval
 *   sets the organization's plan in the transaction that marks the request, the organization
 *   locked first as every creation that counts against its plan locks it.
 */
import {
  AppError,
  authorize,
  encodePageToken,
  idSchema,
  newId,
  pageCursor,
  requireAdmin,
  ROLE_PERMISSIONS,
  userOf,
  type AuthContext,
  type PlanName,
  type UpgradeRequest,
  auditEntryOf,
  type CallOrigin,
} from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import { z } from 'zod';
import type { MemberRepository } from '../repo/member.repository';
import type { OrganizationRepository } from '../repo/organization.repository';
import type { UpgradeDecision, UpgradeRequestRepository, UpgradeRequestRow } from '../repo/upgrade-request.repository';
import type { AuditTrail, Transact } from './ports';

const cursor = z.object({ before: idSchema('upgradeRequest') });

export function toUpgradeRequest(row: UpgradeRequestRow): UpgradeRequest {
  return {
    id: row.id,
    org_id: row.org_id,
    plan: row.plan,
    current_plan: row.current_plan,
    message: row.message,
    status: row.status,
    requested_by: row.requested_by,
    created_at: row.created_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
    decision_note: row.decision_note,
  };
}

/** Why the organization, on `current`, may not ask for `plan` now; undefined when it may. */
export function requestRefusal(current: PlanName, plan: PlanName, pending: Pick<UpgradeRequestRow, 'id' | 'plan'> | undefined): AppError | undefined {
  if (plan === current) return new AppError('conflict', `the organization is on the ${plan} plan already; ask for another plan`, { details: [{ path: 'plan', message: `is the current plan` }] });
  if (pending) return new AppError('conflict', `an upgrade request is pending already (${pending.id}, for the ${pending.plan} plan); wait for its decision`);
  return undefined;
}

/** Why a request can no longer be decided; undefined while it can. */
export function decisionRefusal(row: Pick<UpgradeRequestRow, 'status'>): AppError | undefined {
  if (row.status !== 'pending') return new AppError('conflict', `this upgrade request was already ${row.status}`);
  return undefined;
}

export class UpgradeRequests {
  constructor(
    private readonly transact: Transact,
    private readonly requests: Pick<UpgradeRequestRepository, keyof UpgradeRequestRepository>,
    private readonly orgs: Pick<OrganizationRepository, 'lockPlan' | 'setPlan'>,
    private readonly members: Pick<MemberRepository, 'findByUser'>,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
  ) {}

  async create(auth: AuthContext, req: { plan: PlanName; message?: string | undefined }): Promise<UpgradeRequest> {
    const user = userOf(authorize(auth, 'org.manage'));
    const row = await this.transact(async (trx) => {
      // The asker's role as it is now (a token's may be a second old).
      const me = await this.members.findByUser(user.org_id, user.user_id, trx, true);
      if (!me || !ROLE_PERMISSIONS[me.role].includes('org.manage')) throw new AppError('forbidden', `only the owner or an admin can ask for another plan; your role is ${me?.role ?? 'none'}`);
      // Locked: a decision under way is committed before the current plan is read.
      const current = await this.orgs.lockPlan(user.org_id, trx);
      if (!current) throw AppError.notFound('organization');
      const refusal = requestRefusal(current, req.plan, await this.requests.findPending(user.org_id, trx));
      if (refusal) throw refusal;
      const made: UpgradeRequestRow = {
        id: newId('upgradeRequest'),
        org_id: user.org_id,
        plan: req.plan,
        current_plan: current,
        message: req.message ?? null,
        status: 'pending',
        requested_by: user.user_id,
        created_at: this.clock.now(),
        decided_at: null,
        decision_note: null,
      };
      // Another request of the organization arrived after the look above: the index keeps one.
      if (!(await this.requests.insert(made, trx))) throw new AppError('conflict', 'an upgrade request is being made at this moment; list the upgrade requests, or try again');
      return made;
    });
    return toUpgradeRequest(row);
  }

  async list(auth: AuthContext, q: { limit: number; page_token?: string | undefined }): Promise<{ data: UpgradeRequest[]; next_page_token: string | null }> {
    const { org_id } = authorize(auth, 'org.read');
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.requests.list(org_id, { limit: q.limit + 1, before });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toUpgradeRequest), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  async get(auth: AuthContext, id: string): Promise<UpgradeRequest> {
    const { org_id } = authorize(auth, 'org.read');
    const row = await this.requests.find(org_id, id);
    if (!row) throw AppError.notFound('upgrade request');
    return toUpgradeRequest(row);
  }

  /** A platform operator's list: every organization's requests, filtered by status and organization. */
  async listAll(auth: AuthContext, q: { limit: number; page_token?: string | undefined; status?: UpgradeRequest['status'] | undefined; org_id?: string | undefined }): Promise<{ data: UpgradeRequest[]; next_page_token: string | null }> {
    requireAdmin(auth);
    const before = pageCursor(q.page_token, cursor)?.before;
    const rows = await this.requests.listAll({ limit: q.limit + 1, before, status: q.status, org_id: q.org_id });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toUpgradeRequest), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /** A platform operator's decision: approve (the organization moves to the plan asked for) or decline. */
  async decide(auth: AuthContext, req: { id: string; decision: 'approve' | 'decline'; note?: string | undefined }, origin: CallOrigin = {}): Promise<UpgradeRequest> {
    requireAdmin(auth);
    const found = await this.requests.findForDecision(req.id);
    if (!found) throw AppError.notFound('upgrade request');
    const row = await this.transact(async (trx) => {
      // The organization first, as creations and requests lock it: the order every transaction here takes.
      if (!(await this.orgs.lockPlan(found.org_id, trx))) throw AppError.notFound('organization');
      const locked = await this.requests.lock(found.org_id, found.id, trx);
      if (!locked) throw AppError.notFound('upgrade request');
      const refusal = decisionRefusal(locked);
      if (refusal) throw refusal;
      const now = this.clock.now();
      const status: UpgradeDecision = req.decision === 'approve' ? 'approved' : 'declined';
      if (status === 'approved') await this.orgs.setPlan(locked.org_id, locked.plan, now, trx);
      await this.requests.decide(locked.org_id, locked.id, { status, at: now, note: req.note ?? null }, trx);
      await this.audit.record(trx, auditEntryOf({ auth, ...origin }, now, {
        action: status === 'approved' ? 'upgrade_request.approved' : 'upgrade_request.declined',
        org_id: locked.org_id,
        target: { type: 'upgrade_request', id: locked.id },
        details: { plan: locked.plan, note: req.note ?? null },
      }));
      return { ...locked, status, decided_at: now, decision_note: req.note ?? null };
    });
    this.audit.kick();
    return toUpgradeRequest(row);
  }
}
