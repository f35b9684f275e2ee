import { EXIT, exitCodeForStatus } from './exit-codes';

describe('exitCodeForStatus', () => {
  it.each([
    [0, EXIT.network],
    [401, EXIT.auth],
    [403, EXIT.auth],
    [404, EXIT.notFound],
    [400, EXIT.validation],
    [409, EXIT.validation],
    [413, EXIT.validation],
    [422, EXIT.validation],
    [429, EXIT.unavailable],
    [500, EXIT.unavailable],
    [503, EXIT.unavailable],
  ])('maps HTTP %i to exit code %i', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });

  it('keeps the documented numbers', () => {
    expect(EXIT).toEqual({ ok: 0, usage: 1, auth: 2, notFound: 3, validation: 4, unavailable: 5, network: 6 });
  });
});
