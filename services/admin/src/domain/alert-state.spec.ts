import { noticeOf, shownState } from './alert-state';

const now = new Date('2026-11-30T12:00:00.000Z');
const later = new Date('2026-11-30T13:00:00.000Z');
const earlier = new Date('2026-11-30T11:00:00.000Z');

describe('the state of an alert', () => {
  it('is ok, firing, or acknowledged by its condition and acknowledgement', () => {
    expect(shownState({ condition_met: false, acknowledged_at: null, muted_until: null }, now)).toBe('ok');
    expect(shownState({ condition_met: true, acknowledged_at: null, muted_until: null }, now)).toBe('firing');
    expect(shownState({ condition_met: true, acknowledged_at: earlier, muted_until: null }, now)).toBe('acknowledged');
  });

  it('is muted while the mute lasts, whatever the condition, and no longer once it ran out', () => {
    expect(shownState({ condition_met: true, acknowledged_at: null, muted_until: later }, now)).toBe('muted');
    expect(shownState({ condition_met: false, acknowledged_at: null, muted_until: later }, now)).toBe('muted');
    expect(shownState({ condition_met: true, acknowledged_at: null, muted_until: now }, now)).toBe('firing');
  });

  it('tells the operator when it starts firing (also after a mute) and when it clears, nothing else', () => {
    expect(noticeOf('ok', 'firing')).toBe('firing');
    expect(noticeOf('muted', 'firing')).toBe('firing');
    expect(noticeOf('firing', 'ok')).toBe('resolved');
    expect(noticeOf('acknowledged', 'ok')).toBe('resolved');
    expect(noticeOf('firing', 'acknowledged')).toBeNull();
    expect(noticeOf('firing', 'muted')).toBeNull();
    expect(noticeOf('muted', 'ok')).toBeNull();
  });
});
