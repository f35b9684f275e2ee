/**
 * The alert rules (issue 28, part 3): each with thresholds, a condition evaluated on every
 * health sample (alert-rules.ts), a shown state (alert-state.ts) and its transitions. An
 * operator acknowledges a firing alert, mutes one until a time, or changes its thresholds
 * (checked against the rule's schema). The operator is told when an alert starts firing and
 * when it clears (AlertNotifier: mail, and a webhook when configured).
 */
import {
  auditEntryOf,
  type AuditedCall,
  ALERT_KEYS,
  ALERT_THRESHOLDS,
  AppError,
  DEFAULT_ALERT_THRESHOLDS,
  alertState,
  newId,
  type Alert,
  type AlertKey,
  type AlertState,
  type AlertThresholds,
  type HealthReport,
  type RpcParsedRequest,
} from '@mailroom/contracts';
import type { Clock } from '@mailroom/platform';
import type { AlertRepository, AlertRow, AlertTransitionRow } from '../repo/alert.repository';
import { ALERT_DESCRIPTIONS, evaluateRule, isAlertKey, requiredInARow, type RuleInputs, type Signals } from './alert-rules';
import type { PlatformSignals } from './ports';
import type { AuditLog } from './audit-log';
import { noticeOf, shownState } from './alert-state';

export const TRANSITIONS_SHOWN = 20;

export interface AlertNotice {
  key: AlertKey;
  description: string;
  notice: 'firing' | 'resolved';
  detail: string;
  at: string;
}

export interface AlertNotifier {
  notify(notice: AlertNotice): Promise<void>;
}

/** Every notifier told of each notice, one after the other. */
export function notifyAll(notifiers: AlertNotifier[]): AlertNotifier {
  return { notify: async (n) => void (await Promise.all(notifiers.map((x) => x.notify(n)))) };
}

export type AlertStore = Pick<AlertRepository, keyof AlertRepository>;

const HOUR_MS = 3_600_000;

/** A signal's value, or null when its service could not say (the rule is then not evaluated this time). */
async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}

/** The inputs of one rule: the report, and the one signal the rule reads (asked now, over its window). */
async function inputsFor(key: AlertKey, thresholds: Record<string, number>, report: HealthReport, signals: PlatformSignals, now: Date): Promise<RuleInputs> {
  const since = new Date(now.getTime() - (thresholds.window_hours ?? 0) * HOUR_MS);
  let mail: Signals | null = null;
  let disabled: number | null = null;
  let failed: number | null = null;
  if (key === 'bounce_rate' || key === 'complaint_rate') {
    const m = await orNull(() => signals.mail(since));
    mail = m && { sent: m.sent, bounced: m.bounced_hard, complained: m.complained };
  }
  if (key === 'webhook_endpoint_disabled') disabled = await orNull(() => signals.disabledEndpoints(since));
  if (key === 'domain_verification_failed') failed = await orNull(() => signals.failedDomains(since));
  return { report, mail: () => mail, disabledEndpoints: () => disabled, failedDomains: () => failed };
}

/** The stored thresholds of a rule, its defaults filling what is missing or unreadable. */
export function thresholdsOf<K extends AlertKey>(key: K, stored: unknown): AlertThresholds[K] {
  const merged = { ...DEFAULT_ALERT_THRESHOLDS[key], ...(typeof stored === 'object' && stored !== null ? stored : {}) };
  const parsed = ALERT_THRESHOLDS[key].safeParse(merged);
  return (parsed.success ? parsed.data : DEFAULT_ALERT_THRESHOLDS[key]) as AlertThresholds[K];
}

function keyOf(row: AlertRow): AlertKey {
  if (!isAlertKey(row.key)) throw new Error(`unknown alert key in the table: ${row.key}`);
  return row.key;
}

export class Alerts {
  constructor(
    private readonly repo: AlertStore,
    private readonly notifier: AlertNotifier,
    private readonly clock: Clock,
    /** An operator's change of an alert is audited in its transaction. */
    private readonly audit: Pick<AuditLog, 'record'>,
  ) {}

  /** Every rule has its row (default thresholds); run at start-up. */
  async init(): Promise<void> {
    await this.repo.ensure(ALERT_KEYS.map((key) => ({ key, thresholds: JSON.stringify(DEFAULT_ALERT_THRESHOLDS[key]) })));
  }

  async list(): Promise<{ data: Alert[] }> {
    const [rows, transitions] = await Promise.all([this.repo.all(), this.repo.recentTransitions(TRANSITIONS_SHOWN)]);
    const now = this.clock.now();
    return { data: rows.filter((r) => isAlertKey(r.key)).map((r) => this.toAlert(r, transitions, now)) };
  }

  async update(req: RpcParsedRequest<'admin.alert.update'>, call: AuditedCall): Promise<Alert> {
    if (!isAlertKey(req.key)) throw new AppError('not_found', `no alert has the key ${req.key}; the keys are ${ALERT_KEYS.join(', ')}`);
    const key = req.key;
    const now = this.clock.now();
    let thresholds: AlertThresholds[AlertKey] | undefined;
    if (req.thresholds !== undefined) {
      const row = (await this.repo.all()).find((r) => r.key === key);
      const parsed = ALERT_THRESHOLDS[key].safeParse({ ...thresholdsOf(key, row?.thresholds), ...req.thresholds });
      if (!parsed.success) {
        throw new AppError('invalid_request', `invalid thresholds for ${key}`, {
          details: parsed.error.issues.map((i) => ({ path: ['thresholds', ...i.path].join('.'), message: i.message })),
        });
      }
      thresholds = parsed.data;
    }
    if (req.mute_until && Date.parse(req.mute_until) <= now.getTime()) {
      throw new AppError('invalid_request', 'mute_until must be in the future (null unmutes)', { details: [{ path: 'mute_until', message: 'must be in the future' }] });
    }
    await this.repo.transaction(async (trx) => {
      const row = await this.repo.lock(key, trx);
      if (!row) throw AppError.notFound('alert');
      const before = shownState(row, now);
      const next: AlertRow = { ...row };
      const why: string[] = [];
      if (req.acknowledge) {
        if (!row.condition_met) throw new AppError('conflict', `${key} is not firing: nothing to acknowledge`);
        next.acknowledged_at ??= now;
        why.push('acknowledged by an operator');
      }
      if (req.mute_until !== undefined) {
        next.muted_until = req.mute_until === null ? null : new Date(req.mute_until);
        why.push(req.mute_until === null ? 'unmuted by an operator' : `muted by an operator until ${req.mute_until}`);
      }
      if (thresholds) {
        next.thresholds = thresholds;
        why.push('thresholds changed by an operator');
      }
      await this.repo.save({ ...next, thresholds: JSON.stringify(thresholdsOf(key, next.thresholds)) }, trx);
      const after = shownState(next, now);
      if (after !== before) await this.repo.addTransition(transition(key, before, after, now, why.join('; ')), trx);
      await this.audit.record(auditEntryOf(call, now, { action: 'alert.updated', org_id: null, target: { type: 'alert', id: key }, details: { change: why.join('; ') || 'nothing', from: before, to: after } }), trx);
    });
    return (await this.list()).data.find((a) => a.key === key)!;
  }

  /** Evaluates every rule on a new sample; notifies the operator of alerts that start firing or clear. */
  async evaluate(report: HealthReport, signals: PlatformSignals): Promise<void> {
    const now = this.clock.now();
    const notices: AlertNotice[] = [];
    for (const stored of await this.repo.all()) {
      if (!isAlertKey(stored.key)) continue;
      const key = keyOf(stored);
      const thresholds = thresholdsOf(key, stored.thresholds);
      const verdict = evaluateRule(key, thresholds, await inputsFor(key, thresholds, report, signals, now));
      await this.repo.transaction(async (trx) => {
        const row = await this.repo.lock(key, trx);
        if (!row) return;
        // As shown at the last evaluation: a mute that ran out since is a change now.
        const before = shownState(row, row.evaluated_at ?? now);
        const next: AlertRow = { ...row, evaluated_at: now };
        if (verdict) {
          next.detail = verdict.detail;
          next.consecutive = verdict.met ? row.consecutive + 1 : 0;
          next.condition_met = verdict.met && next.consecutive >= requiredInARow(key, thresholds);
          if (next.condition_met && !row.condition_met) next.last_fired_at = now;
          if (!next.condition_met && row.condition_met) {
            next.last_resolved_at = now;
            next.acknowledged_at = null;
          }
        }
        // A mute that ran out is cleared, so the state shown and the row agree.
        if (next.muted_until && next.muted_until.getTime() <= now.getTime()) next.muted_until = null;
        await this.repo.save({ ...next, thresholds: JSON.stringify(thresholds) }, trx);
        const after = shownState(next, now);
        if (after === before) return;
        const reason = after === 'firing' || after === 'ok' ? (next.detail ?? '') : before === 'muted' ? 'the mute ran out' : next.detail ?? '';
        await this.repo.addTransition(transition(key, before, after, now, reason), trx);
        const notice = noticeOf(before, after);
        if (notice) notices.push({ key, description: ALERT_DESCRIPTIONS[key], notice, detail: next.detail ?? '', at: now.toISOString() });
      });
    }
    // After the commits: a notice failing does not undo the evaluation.
    for (const n of notices) await this.notifier.notify(n);
  }

  async purge(before: Date): Promise<void> {
    await this.repo.purgeTransitions(before);
  }

  private toAlert(row: AlertRow, transitions: AlertTransitionRow[], now: Date): Alert {
    const key = keyOf(row);
    return {
      key,
      description: ALERT_DESCRIPTIONS[key],
      state: shownState(row, now),
      condition_met: row.condition_met,
      detail: row.detail,
      thresholds: thresholdsOf(key, row.thresholds),
      muted_until: row.muted_until && row.muted_until.getTime() > now.getTime() ? row.muted_until.toISOString() : null,
      acknowledged_at: row.acknowledged_at?.toISOString() ?? null,
      last_fired_at: row.last_fired_at?.toISOString() ?? null,
      last_resolved_at: row.last_resolved_at?.toISOString() ?? null,
      evaluated_at: row.evaluated_at?.toISOString() ?? null,
      transitions: transitions
        .filter((t) => t.key === key)
        .map((t) => ({ from: alertState.parse(t.from_state), to: alertState.parse(t.to_state), at: t.at.toISOString(), reason: t.reason })),
    };
  }
}

function transition(key: AlertKey, from: AlertState, to: AlertState, at: Date, reason: string): AlertTransitionRow {
  return { id: newId('alertTransition', at.getTime()), key, from_state: from, to_state: to, at, reason };
}
