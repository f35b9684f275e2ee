import { routeOf, type ServedRow } from './routing';

const at = new Date('2026-11-26T00:00:00Z');
const row = (over: Partial<ServedRow>): ServedRow => ({ org_id: 'org_a', status: 'verified', catch_all_address: null, verified_at: at, ...over });

describe('routeOf', () => {
  it('serves nothing for a name never verified', () => {
    expect(routeOf([])).toEqual({ served: false, catch_all_address: null, org_ids: [] });
    expect(routeOf([row({ status: 'pending', verified_at: null })])).toEqual({ served: false, catch_all_address: null, org_ids: [] });
  });

  it('keeps serving a verified domain whose records broke, while nobody else has it verified', () => {
    expect(routeOf([row({ status: 'failed', catch_all_address: 'all@example.com' })])).toEqual({ served: true, catch_all_address: 'all@example.com', org_ids: ['org_a'] });
  });

  it('serves only the organization that has the name verified now: the one whose records broke keeps neither inboxes nor catch-all there', () => {
    const rows = [row({ status: 'failed', catch_all_address: 'old@example.com' }), row({ org_id: 'org_b', status: 'verified' })];
    expect(routeOf(rows)).toEqual({ served: true, catch_all_address: null, org_ids: ['org_b'] });
    const withTheirs = [...rows, row({ org_id: 'org_b', status: 'verified', catch_all_address: 'new@example.com' })];
    expect(routeOf(withTheirs).catch_all_address).toBe('new@example.com');
  });

  it("serves every environment of the organization holding it, with the one catch-all set among them", () => {
    expect(routeOf([row({}), row({ catch_all_address: 'all@example.com' })])).toEqual({ served: true, catch_all_address: 'all@example.com', org_ids: ['org_a'] });
  });
});
