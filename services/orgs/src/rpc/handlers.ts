/** The orgs service's operations: parse is done by serveRpc, tenancy is checked here. */
import { AppError, authorize, requireService, tenantOf } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { Departures } from '../domain/departures';
import type { Environments } from '../domain/environments';
import type { Invitations } from '../domain/invitations';
import type { Members } from '../domain/members';
import type { Organizations } from '../domain/organizations';
import type { OwnershipTransfers } from '../domain/ownership-transfers';
import type { Usage } from '../domain/usage';
import type { UpgradeRequests } from '../domain/upgrade-requests';
import type { SsoMembers } from '../domain/sso-members';
import type { OrgsExport } from '../domain/export';

export interface OrgsDomain {
  orgs: Organizations;
  members: Members;
  environments: Environments;
  transfers: OwnershipTransfers;
  invitations: Invitations;
  upgrades: UpgradeRequests;
  usage: Usage;
  /** A person's deleted account (auth asks; services only). */
  departures: Departures;
  /** Members made by single sign-on (auth asks; services only). */
  ssoMembers: SsoMembers;
  /** The organization's rows for its export (the admin service asks; services only). */
  exportRows: OrgsExport;
}

export function orgsHandlers({ orgs, members, environments, transfers, invitations, upgrades, usage, departures, ssoMembers, exportRows }: OrgsDomain): RpcHandlers<'orgs'> {
  return {
    'orgs.organization.createForOwner': async (req, { auth }) => {
      requireService(auth);
      return orgs.createForOwner(req.owner_user_id, req.name);
    },
    'orgs.organization.get': async (req, { auth }) => {
      if (auth.kind === 'service') {
        if (!req.org_id) throw new AppError('invalid_request', 'org_id is required');
        return orgs.get(req.org_id);
      }
      const own = tenantOf(auth).org_id;
      if (req.org_id && req.org_id !== own) throw AppError.notFound('organization');
      return orgs.get(own);
    },
    'orgs.organization.update': (req, { auth }) => orgs.update(authorize(auth, 'org.manage'), req),
    // Org-wide, whichever environment the caller acts in (permission org.read, checked by the gateway).
    'orgs.organization.usage': (_req, { auth }) => usage.of(tenantOf(auth).org_id),
    'orgs.membership.addForSso': async (req, { auth }) => {
      requireService(auth);
      return ssoMembers.join(req);
    },
    'orgs.membership.listForUser': async (req, { auth }) => {
      requireService(auth);
      return { data: await orgs.membershipsOf(req.user_id) };
    },
    'orgs.member.list': (req, { auth }) => members.list(auth, req),
    'orgs.member.get': (req, { auth }) => members.get(auth, req.id),
    'orgs.member.update': (req, { auth, requestId, client }) => members.changeRole(auth, req.id, req.role, { requestId, client }),
    'orgs.member.remove': async (req, { auth, requestId, client }) => {
      await members.remove(auth, req.id, { requestId, client });
      return {};
    },
    'orgs.member.leave': async (_req, { auth }) => {
      await members.leave(auth);
      return {};
    },
    'orgs.environment.get': async (req, { auth }) => {
      // Callers ask about an org they act for: a service on a user's behalf, or the tenant itself.
      if (auth.kind !== 'service' && tenantOf(auth).org_id !== req.org_id) throw AppError.notFound('environment');
      return orgs.environment(req.org_id, req.env_id);
    },
    'orgs.environment.create': (req, { auth }) => environments.create(auth, req),
    'orgs.environment.list': (req, { auth }) => environments.list(auth, req),
    'orgs.environment.show': (req, { auth }) => environments.get(auth, req.env_id),
    'orgs.environment.rename': (req, { auth }) => environments.rename(auth, req.env_id, req.name),
    'orgs.environment.delete': async (req, { auth }) => {
      await environments.delete(auth, req.env_id);
      return {};
    },
    'orgs.environment.access': async (req, { auth }) => {
      requireService(auth);
      return environments.access(req);
    },
    'orgs.envMember.add': (req, { auth }) => environments.addMember(auth, req.env_id, req.member_id),
    'orgs.envMember.list': (req, { auth }) => environments.listMembers(auth, req.env_id, req),
    'orgs.envMember.remove': async (req, { auth }) => {
      await environments.removeMember(auth, req.env_id, req.member_id);
      return {};
    },
    'orgs.transfer.create': (req, { auth }) => transfers.create(auth, req.member_id),
    'orgs.transfer.pending': (_req, { auth }) => transfers.pending(auth),
    'orgs.transfer.accept': (req, { auth, requestId, client }) => transfers.accept(auth, req.id, { requestId, client }),
    'orgs.transfer.cancel': (req, { auth }) => transfers.cancel(auth, req.id),
    'orgs.invitation.create': (req, { auth }) => invitations.create(auth, req),
    'orgs.invitation.list': (req, { auth }) => invitations.list(auth, req),
    'orgs.invitation.revoke': async (req, { auth }) => {
      await invitations.revoke(auth, req.id);
      return {};
    },
    'orgs.invitation.accept': (req, { auth }) => invitations.accept(auth, req.token),
    'orgs.upgrade.create': (req, { auth }) => upgrades.create(auth, req),
    'orgs.upgrade.list': (req, { auth }) => upgrades.list(auth, req),
    'orgs.upgrade.get': (req, { auth }) => upgrades.get(auth, req.id),
    'orgs.upgrade.decide': (req, { auth, requestId, client }) => upgrades.decide(auth, req, { requestId, client }),
    'orgs.upgrade.listAll': (req, { auth }) => upgrades.listAll(auth, req),
    'orgs.organization.limits': async (req, { auth }) => {
      requireService(auth);
      return orgs.limits(req.org_id);
    },
    'orgs.membership.owned': async (req, { auth }) => {
      requireService(auth);
      return { data: await departures.owned(req.user_id) };
    },
    'orgs.membership.purgeUser': async (req, { auth }) => {
      requireService(auth);
      return departures.purge(req.user_id);
    },
    'orgs.export.page': async (req, { auth }) => {
      requireService(auth);
      return exportRows.page(req);
    },
  };
}
