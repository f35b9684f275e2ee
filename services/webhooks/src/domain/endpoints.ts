/**
 * The endpoints API of a tenant: create (the only answer with the secret), list, get,
 * update, delete; the delivery records of an endpoint; redelivery of one attempt's event
 * and recovery of a window of events. Every operation is scoped to the caller's org and
 * environment: another tenant's id is not found. The organization's plan limits its
 * endpoints, all environments together (403 plan_limit); WEBHOOK_MAX_ENDPOINTS bounds one
 * environment's (409), each event going to every one of them.
 * When orgs deletes an environment, its endpoints are deleted as one is, and none is created
 * in it afterwards (404, as for any environment that is not there).
 */
import {
  AppError,
  checkRoomForOneMore,
  EVENT_TYPES,
  pageCursor,
  encodePageToken,
  idSchema,
  newId,
  WEBHOOK_RECOVER_MAX_DAYS,
  type EventEnvelope,
  type EventType,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointCreated,
  type WebhookRecovery,
  type Fact,
  type Tenant,
} from '@mailroom/contracts';
import type { Clock, SecretBox } from '@mailroom/platform';
import { z } from 'zod';
import type { AttemptRow, DeliveryRepository, StoredEvent } from '../repo/delivery.repository';
import type { WebhooksTx } from '../repo/tables';
import type { EndpointRepository, EndpointRow } from '../repo/endpoint.repository';
import type { RecoveryRepository, RecoveryRow } from '../repo/recovery.repository';
import type { RetryPolicy } from './retry-policy';
import { newWebhookSecret } from './signature';
import { DISABLED_BY_USER } from './endpoint-health';
import { inboxOf } from './subscription';
import { checkReceiverUrl, type UrlPolicyOptions } from './url-policy';
import type { DeletedEnvironments, EndpointChanged, InboxesPort, PlanLimitsPort, Transact, WakeDispatcher } from './ports';

const DAY_MS = 86_400_000;
/** Slack on the 14 days: a client that sends "now - 14 days" reaches us a little later. */
const RECOVER_GRACE_MS = 60_000;

export function toEventType(value: string): EventType {
  const found = EVENT_TYPES.find((t) => t === value);
  if (!found) throw new AppError('internal_error', `stored event type ${value} is not catalogued`);
  return found;
}

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  const types = row.event_types;
  return {
    id: row.id,
    url: row.url,
    events: types === null ? [...EVENT_TYPES] : EVENT_TYPES.filter((t) => types.includes(t)),
    inbox_ids: row.inbox_ids,
    description: row.description,
    disabled: row.disabled,
    disabled_reason: row.disabled ? row.disabled_reason : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toRecovery(row: RecoveryRow): WebhookRecovery {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    since: row.since.toISOString(),
    until: row.until.toISOString(),
    status: row.status,
    queued: row.queued,
    ...(row.error ? { error: row.error } : {}),
    created_at: row.created_at.toISOString(),
    ...(row.finished_at ? { finished_at: row.finished_at.toISOString() } : {}),
  };
}

export function toDelivery(row: AttemptRow): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: toEventType(row.event_type),
    status: row.status,
    http_status: row.http_status,
    attempt: row.attempt,
    trigger: row.triggered_by,
    ...(row.error ? { error: row.error } : {}),
    duration_ms: row.duration_ms,
    created_at: row.created_at.toISOString(),
    ...(row.next_attempt_at ? { next_attempt_at: row.next_attempt_at.toISOString() } : {}),
    ...(row.response_body ? { response_body: row.response_body } : {}),
  };
}

/** The stored form of an envelope: serialized once, these bytes are every attempt's body; `traceparent`, the trace its attempts are children of. */
export function storedEvent(envelope: EventEnvelope, traceparent: string | null = null): StoredEvent {
  return {
    id: envelope.id,
    org_id: envelope.org_id,
    env_id: envelope.env_id,
    type: envelope.type,
    body: Buffer.from(JSON.stringify(envelope), 'utf8'),
    occurred_at: new Date(envelope.timestamp),
    inbox_id: inboxOf(envelope),
    traceparent,
  };
}

const endpointCursor = z.object({ before: idSchema('webhookEndpoint') });
const deliveryCursor = z.object({ before: idSchema('delivery') });

export interface EndpointsDeps {
  transact: Transact;
  endpoints: Pick<EndpointRepository, keyof EndpointRepository>;
  deliveries: Pick<DeliveryRepository, 'cancelPending' | 'deleteForEndpoint' | 'deleteAttempts' | 'listAttempts' | 'findAttempt' | 'queueManual'>;
  /** Environments orgs deleted: endpoints are not created in them. */
  deleted: DeletedEnvironments;
  box: SecretBox;
  clock: Clock;
  urls: UrlPolicyOptions;
  retries: RetryPolicy;
  /** Endpoints one environment may have (WEBHOOK_MAX_ENDPOINTS). */
  maxEndpoints: number;
  /** The organization's plan limits (asked of orgs). */
  plans: PlanLimitsPort;
  /** Whether an inbox is in an environment (asked of mailbox). */
  inboxes: InboxesPort;
  recoveries: Pick<RecoveryRepository, 'start' | 'find'>;
  /** Has the recovery runner look for work now (a recovery was started). */
  runRecoveries: () => void;
  wake: WakeDispatcher;
  changed: EndpointChanged;
}

export class Endpoints {
  constructor(private readonly d: EndpointsDeps) {}

  async create(t: Tenant, input: { url: string; events?: EventType[] | undefined; description?: string | undefined; inbox_ids?: string[] | undefined }): Promise<WebhookEndpointCreated> {
    const url = checkReceiverUrl(input.url, this.d.urls);
    if (input.inbox_ids) await this.requireInboxes(t, input.inbox_ids);
    const now = this.d.clock.now();
    const id = newId('webhookEndpoint');
    const secret = newWebhookSecret();
    const row: Parameters<EndpointRepository['insert']>[0] = {
      id,
      org_id: t.org_id,
      env_id: t.env_id,
      url,
      event_types: input.events ?? null,
      inbox_ids: input.inbox_ids ?? null,
      description: input.description || null,
      // Bound to the endpoint id: a sealed secret copied onto another row does not open.
      secret_sealed: this.d.box.seal(secret, id),
      created_at: now,
      updated_at: now,
    };
    // Asked before the transaction: no database connection waits on the bus.
    const { plan, plans } = await this.d.plans.of(t.org_id);
    await this.d.transact(async (trx) => {
      await this.d.endpoints.lockOrganization(t.org_id, trx);
      await checkRoomForOneMore(plans, plan, 'webhook_endpoints', () => this.d.endpoints.countInOrg(t.org_id, trx));
      const max = this.d.maxEndpoints;
      if ((await this.d.endpoints.count(t, trx)) >= max) {
        throw new AppError('conflict', `this environment has ${max} webhook endpoints, the most it can have; delete one first (one endpoint can subscribe to several event types)`);
      }
      // A stale gateway (or one in the instant before orgs' fact arrives) may still let a request
      // act in an environment orgs deleted: the insert is refused once its deletion is recorded here.
      if (!(await this.d.endpoints.insert(row, trx))) throw AppError.notFound('environment');
    });
    return { ...toEndpoint({ ...row, disabled: false, disabled_reason: null, disabled_at: null, consecutive_failures: 0 }), secret };
  }

  /** Each inbox must be one of the tenant's environment: another's, or none, is a 404 (as another tenant's id is). */
  private async requireInboxes(t: Tenant, inboxIds: readonly string[]): Promise<void> {
    const found = await Promise.all(inboxIds.map((id) => this.d.inboxes.inEnvironment(t, id)));
    const missing = inboxIds.filter((_, i) => !found[i]);
    if (missing.length) {
      throw new AppError('not_found', `inbox ${missing.join(', ')} not found in this environment`, { details: missing.map((id) => ({ path: `inbox_ids[${inboxIds.indexOf(id)}]`, message: 'not found' })) });
    }
  }

  async list(t: Tenant, q: { limit: number; page_token?: string | undefined }): Promise<{ data: WebhookEndpoint[]; next_page_token: string | null }> {
    const before = pageCursor(q.page_token, endpointCursor)?.before;
    const rows = await this.d.endpoints.list(t, { limit: q.limit + 1, before });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toEndpoint), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /** How many endpoints the environment holds (orgs asks before deleting an environment). */
  async count(t: Tenant): Promise<{ count: number }> {
    return { count: await this.d.endpoints.count(t) };
  }

  /** How many endpoints the organization holds in every environment, disabled ones included (its usage: orgs asks). */
  async usage(orgId: string): Promise<{ webhook_endpoints: number }> {
    return { webhook_endpoints: await this.d.endpoints.countInOrg(orgId) };
  }

  /** Endpoints of the whole platform auto-disabled (consecutive failures) since, for admin's alerts. */
  async countAutoDisabled(since: string): Promise<{ count: number }> {
    return { count: await this.d.endpoints.countDisabledSince(new Date(since), DISABLED_BY_USER) };
  }

  async get(t: Tenant, id: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.require(t, id));
  }

  async update(
    t: Tenant,
    id: string,
    input: {
      url?: string | undefined;
      events?: EventType[] | null | undefined;
      description?: string | null | undefined;
      disabled?: boolean | undefined;
      inbox_ids?: string[] | null | undefined;
    },
  ): Promise<WebhookEndpoint> {
    const url = input.url === undefined ? undefined : checkReceiverUrl(input.url, this.d.urls);
    // Asked before the transaction: no database connection waits on the bus. (Another tenant's endpoint id is still a 404, below.)
    if (input.inbox_ids) await this.requireInboxes(t, input.inbox_ids);
    const now = this.d.clock.now();
    const updated = await this.d.transact(async (trx) => {
      const current = await this.d.endpoints.findForUpdate(t, id, trx);
      if (!current) throw AppError.notFound('webhook endpoint');
      const set: Parameters<EndpointRepository['update']>[2] = { updated_at: now };
      if (url !== undefined) set.url = url;
      if (input.events !== undefined) set.event_types = input.events;
      if (input.inbox_ids !== undefined) set.inbox_ids = input.inbox_ids;
      if (input.description !== undefined) set.description = input.description || null;
      if (input.disabled === false && current.disabled) {
        // Re-enabling starts a new count; deliveries cancelled by the disable stay cancelled (recover re-sends them).
        // (false on an enabled endpoint changes nothing: a client that sends it with every update does not reset the count.)
        Object.assign(set, { disabled: false, disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
      } else if (input.disabled === true && !current.disabled) {
        Object.assign(set, { disabled: true, disabled_reason: DISABLED_BY_USER, disabled_at: now });
        await this.d.deliveries.cancelPending([id], trx);
      }
      const row = await this.d.endpoints.update(t, id, set, trx);
      if (!row) throw AppError.notFound('webhook endpoint');
      return row;
    });
    // Committed: deliveries queued here stop (disabled) or go to the new URL.
    this.d.changed(id, { url: updated.url, disabled: updated.disabled, consecutiveFailures: updated.consecutive_failures });
    return toEndpoint(updated);
  }

  async delete(t: Tenant, id: string): Promise<void> {
    const deleted = await this.d.transact(async (trx) => {
      if (!(await this.d.endpoints.delete(t, id, trx))) return false;
      await this.deleteDeliveries([id], trx);
      return true;
    });
    if (!deleted) throw AppError.notFound('webhook endpoint');
    this.d.changed(id, undefined);
  }

  /**
   * Orgs deleted an environment: its endpoints are deleted with the record of the deletion, in
   * one transaction (an endpoint created before it is deleted, one after is refused), as
   * `delete` deletes one. A fact read again deletes nothing.
   */
  async environmentDeleted(fact: Fact<'internal.orgs.environment.deleted'>): Promise<{ removed: number }> {
    const ids = await this.d.transact(async (trx) => {
      await this.d.deleted.record(trx, { org_id: fact.org_id, env_id: fact.env_id, deleted_at: new Date(fact.deleted_at) });
      const deleted = await this.d.endpoints.deleteAllIn({ org_id: fact.org_id, env_id: fact.env_id }, trx);
      await this.deleteDeliveries(deleted, trx);
      return deleted;
    });
    for (const id of ids) this.d.changed(id, undefined);
    return { removed: ids.length };
  }

  /**
   * What goes with deleted endpoints, in their transaction: their queued deliveries and their
   * attempts. A delivery a concurrent fan-out adds after this is dropped when claimed or
   * recorded: its endpoint is gone. Those already queued by a dispatcher are dropped once
   * the deletion is committed (`changed`), or at its next record (other instances).
   */
  private async deleteDeliveries(endpointIds: string[], trx: WebhooksTx): Promise<void> {
    for (const id of endpointIds) {
      await this.d.deliveries.deleteForEndpoint(id, trx);
      await this.d.deliveries.deleteAttempts(id, trx);
    }
  }

  async deliveries(t: Tenant, id: string, q: { limit: number; page_token?: string | undefined }): Promise<{ data: WebhookDelivery[]; next_page_token: string | null }> {
    await this.require(t, id);
    const before = pageCursor(q.page_token, deliveryCursor)?.before;
    const rows = await this.d.deliveries.listAttempts(t, id, { limit: q.limit + 1, before });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { data: page.map(toDelivery), next_page_token: rows.length > q.limit && last ? encodePageToken({ before: last.id }) : null };
  }

  /** One manual attempt of the event of `deliveryId`, with the same event id and body. */
  async redeliver(t: Tenant, id: string, deliveryId: string): Promise<{ endpoint_id: string; event_id: string }> {
    const endpoint = await this.require(t, id);
    const attempt = await this.d.deliveries.findAttempt(t, id, deliveryId);
    if (!attempt) throw AppError.notFound('delivery');
    const disabled = () => new AppError('conflict', 'the endpoint is disabled; re-enable it (PATCH disabled: false) before redelivering');
    if (endpoint.disabled) throw disabled();
    if (!(await this.d.deliveries.queueManual({ endpoint_id: id, event_id: attempt.event_id, now: this.d.clock.now() }))) {
      // Deleted or disabled since it was read: answered as if that had come first.
      if (!(await this.d.endpoints.find(t, id))) throw AppError.notFound('webhook endpoint');
      throw disabled();
    }
    this.d.wake(id);
    return { endpoint_id: id, event_id: attempt.event_id };
  }

  /**
   * Starts a recovery: every event of [since, until) this endpoint is subscribed to and has
   * no successful delivery of is queued again, read back from the durable event stream in
   * the background (see RecoveryRunner). One runs per endpoint at a time. Recovered
   * deliveries are retried on the normal schedule.
   */
  async recover(t: Tenant, id: string, input: { since: string; until?: string | undefined }): Promise<WebhookRecovery> {
    const endpoint = await this.require(t, id);
    const now = this.d.clock.now();
    const since = new Date(input.since);
    const until = input.until ? new Date(Math.min(Date.parse(input.until), now.getTime())) : now;
    const invalid = (message: string) => new AppError('invalid_request', message, { details: [{ path: 'since', message }] });
    if (since.getTime() >= until.getTime()) throw invalid('since must be before until (and before now)');
    if (until.getTime() - since.getTime() > WEBHOOK_RECOVER_MAX_DAYS * DAY_MS + RECOVER_GRACE_MS) throw invalid(`the window can be at most ${WEBHOOK_RECOVER_MAX_DAYS} days`);
    // The event stream keeps 15 days: a window further back would find nothing (or part of it), not fail.
    if (since.getTime() < now.getTime() - WEBHOOK_RECOVER_MAX_DAYS * DAY_MS - RECOVER_GRACE_MS) throw invalid(`since can be at most ${WEBHOOK_RECOVER_MAX_DAYS} days ago: older events are not kept`);
    if (endpoint.disabled) throw new AppError('conflict', 'the endpoint is disabled; re-enable it (PATCH disabled: false) before recovering');
    const started = await this.d.recoveries.start({ id: newId('recovery'), endpoint_id: id, since, until, now });
    // Deleted since it was read: as if the delete had come first.
    if ('endpointGone' in started) throw AppError.notFound('webhook endpoint');
    if ('running' in started) {
      throw new AppError('conflict', `a recovery of this endpoint is running (${started.running.id}); start another when it has finished`, {
        details: [{ path: 'recovery_id', message: started.running.id }],
      });
    }
    this.d.runRecoveries();
    return toRecovery(started.started);
  }

  async recovery(t: Tenant, id: string, recoveryId: string): Promise<WebhookRecovery> {
    const row = await this.d.recoveries.find(t, id, recoveryId);
    if (!row) throw AppError.notFound('recovery');
    return toRecovery(row);
  }

  private async require(t: Tenant, id: string): Promise<EndpointRow> {
    const row = await this.d.endpoints.find(t, id);
    if (!row) throw AppError.notFound('webhook endpoint');
    return row;
  }
}
