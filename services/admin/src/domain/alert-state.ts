/**
 * An alert's state as shown, from what is stored: muted while its mute lasts (whatever its
 * condition), else firing while its condition holds, acknowledged once an operator said so
 * (until the condition clears: the next firing needs a new acknowledgement), else ok.
 */
import type { AlertState } from '@mailroom/contracts';

export interface StoredAlertState {
  condition_met: boolean;
  acknowledged_at: Date | null;
  muted_until: Date | null;
}

export function shownState(a: StoredAlertState, now: Date): AlertState {
  if (a.muted_until && a.muted_until.getTime() > now.getTime()) return 'muted';
  if (!a.condition_met) return 'ok';
  return a.acknowledged_at ? 'acknowledged' : 'firing';
}

/** Whether a change of shown state is worth a notice to the operator: it starts firing, or it stops. */
export function noticeOf(from: AlertState, to: AlertState): 'firing' | 'resolved' | null {
  if (to === 'firing' && from !== 'firing') return 'firing';
  if (to === 'ok' && (from === 'firing' || from === 'acknowledged')) return 'resolved';
  return null;
}
