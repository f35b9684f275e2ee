import { isCanonicalCompactJws } from './jws-format';

describe('isCanonicalCompactJws', () => {
  it('accepts three canonical base64url segments (payload may be empty)', () => {
    expect(isCanonicalCompactJws('eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(true);
    expect(isCanonicalCompactJws('eyJhbGciOiJFZERTQSJ9..c2ln')).toBe(true);
  });

  it.each([
    ['padding', 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0=.c2ln'],
    ['spaces', 'eyJhbGciOiJFZERTQSJ9 .eyJzdWIiOiJ4In0.c2ln'],
    ['standard base64', 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0+.c2ln'],
    ['non-zero trailing bits', 'eyJhbGciOiJFZERTQSJ9.AB.c2ln'],
    ['two segments', 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0'],
    ['empty signature', 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.'],
  ])('refuses %s', (_what, token) => {
    expect(isCanonicalCompactJws(token)).toBe(false);
  });
});
