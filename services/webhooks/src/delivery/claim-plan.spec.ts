import { planClaim } from './claim-plan';

const ep = (drained: boolean, fromClaims: number) => ({ drained, fromClaims });

describe('planClaim', () => {
  it('tops up an endpoint only once it is down to half, and not one a claim found drained', () => {
    const endpoints = new Map([
      ['half', ep(false, 64)],
      ['low', ep(false, 10)],
      ['drained', ep(true, 0)],
      ['full', ep(false, 100)],
    ]);
    expect(planClaim(endpoints, 1_000, 128, false)).toEqual({ endpoints: [{ id: 'half', room: 64 }, { id: 'low', room: 118 }], discover: undefined });
  });

  it('asks for every known endpoint and for unknown ones with the room left when discovering', () => {
    const endpoints = new Map([['drained', ep(true, 0)], ['full', ep(false, 100)]]);
    expect(planClaim(endpoints, 1_000, 128, true)).toEqual({
      endpoints: [{ id: 'drained', room: 128 }, { id: 'full', room: 28 }],
      discover: { endpoints: 6, room: 128, exclude: ['drained', 'full'] },
    });
  });

  it('never asks for more than the room, and asks nothing when there is nothing to ask', () => {
    const endpoints = new Map([['a', ep(false, 0)], ['b', ep(false, 0)]]);
    expect(planClaim(endpoints, 100, 128, true)).toEqual({ endpoints: [{ id: 'a', room: 100 }], discover: undefined });
    expect(planClaim(new Map([['a', ep(true, 0)]]), 100, 128, false)).toBeUndefined();
    expect(planClaim(new Map(), 0, 128, true)).toBeUndefined();
  });
});
