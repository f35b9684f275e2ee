import type { ColumnType, Generated, Transaction } from '@mailroom/db';
import type { OrganizationStatus, PlanName, Role } from '@mailroom/contracts';

type Timestamp = ColumnType<Date, Date | undefined, Date>;

export interface OrganizationTable {
  id: string;
  name: string;
  plan: Generated<PlanName>;
  status: Generated<OrganizationStatus>;
  signup_user_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EnvironmentTable {
  id: string;
  org_id: string;
  name: string;
  is_default: boolean;
  created_at: Timestamp;
}

export interface MemberTable {
  id: string;
  org_id: string;
  user_id: string;
  role: Role;
  created_at: Timestamp;
}

export interface EnvironmentMemberTable {
  env_id: string;
  member_id: string;
  org_id: string;
  user_id: string;
  created_at: Timestamp;
}

export interface OutboxTable {
  id: string;
  subject: string | null;
  payload: string;
  created_at: Timestamp;
  published_at: Date | null;
  /** The W3C traceparent of the work that wrote the row (libs/runtime Outbox); null with telemetry off. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OwnershipTransferTable {
  id: string;
  org_id: string;
  from_member_id: string;
  from_user_id: string;
  to_member_id: string;
  to_user_id: string;
  status: 'pending' | 'accepted' | 'cancelled' | 'expired';
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
}

export interface InvitationTable {
  id: string;
  org_id: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  token_hash: string;
  status: 'pending' | 'accepted' | 'revoked';
  invited_by_user_id: string;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  member_id: string | null;
}

export interface UpgradeRequestTable {
  id: string;
  org_id: string;
  plan: PlanName;
  current_plan: PlanName;
  message: string | null;
  status: 'pending' | 'approved' | 'declined';
  requested_by: string;
  created_at: Date;
  decided_at: Date | null;
  decision_note: string | null;
}

export interface OrgsDb {
  organizations: OrganizationTable;
  environments: EnvironmentTable;
  members: MemberTable;
  environment_members: EnvironmentMemberTable;
  outbox: OutboxTable;
  ownership_transfers: OwnershipTransferTable;
  invitations: InvitationTable;
  upgrade_requests: UpgradeRequestTable;
}

/** A transaction of this schema: what the domain's Transact port opens and hands to repositories. */
export type OrgsTx = Transaction<OrgsDb>;
