import { nowArgument } from './cli';

describe('purge-deleted --now', () => {
  const present = new Date('2026-11-28T11:00:00.000Z');

  it('takes an ISO time, or the present when none is given', () => {
    expect(nowArgument(['--now', '2027-01-01T00:00:00Z'], present)).toEqual(new Date('2027-01-01T00:00:00.000Z'));
    expect(nowArgument(['--now', '2027-01-01T01:00:00+01:00'], present)).toEqual(new Date('2027-01-01T00:00:00.000Z'));
    expect(nowArgument([], present)).toBe(present);
  });

  it('refuses what is not one ISO time after --now', () => {
    for (const args of [['--now'], ['--now', 'tomorrow'], ['--now', '2027-13-45T00:00:00Z'], ['--now', '1700000000'], ['--later'], ['--now', '2027-01-01T00:00:00Z', 'extra']]) {
      expect([args, nowArgument(args, present)]).toEqual([args, undefined]);
    }
  });
});
