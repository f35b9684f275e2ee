import { routeOf, type ServedRow } from './routing';

const at = new Date('2026-11-26T00:00:00Z');
const row = (over: Partial<ServedRow>): ServedRow => ({ status: 'verified', catch_all_address: null, verified_at: at, ...over });

describe('routeOf', () => {
  it('serves nothing for a name never verified', () => {
    expect(routeOf([])).toEqual({ served: false, catch_all_address: null });
    expect(routeOf([row({ status: 'pending', verified_at: null })])).toEqual({ served: false, catch_all_address: null });
  });

  it('keeps serving a verified domain whose records broke', () => {
    expect(routeOf([row({ status: 'failed', catch_all_address: 'all@example.com' })])).toEqual({ served: true, catch_all_address: 'all@example.com' });
  });

  it("takes the verified row's catch-all before a failed one's", () => {
    const rows = [row({ status: 'failed', catch_all_address: 'old@example.com' }), row({ status: 'verified', catch_all_address: 'new@example.com' })];
    expect(routeOf(rows).catch_all_address).toBe('new@example.com');
  });

  it('serves without a catch-all when no row has one', () => {
    expect(routeOf([row({}), row({ status: 'failed' })])).toEqual({ served: true, catch_all_address: null });
  });
});
