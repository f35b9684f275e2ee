import { createKeyArguments } from './cli';

describe('cli.js create-key arguments', () => {
  it('take a name and an optional expiry, and say what is wrong otherwise', () => {
    expect(createKeyArguments(['--name', 'ops'])).toEqual({ name: 'ops' });
    expect(createKeyArguments(['--name', 'ops', '--expires-at', '2027-01-01T00:00:00.000Z'])).toEqual({ name: 'ops', expires_at: '2027-01-01T00:00:00.000Z' });
    expect(createKeyArguments([])).toMatch(/^--name: /);
    expect(createKeyArguments(['--name'])).toBe('unexpected argument --name');
    expect(createKeyArguments(['--name', 'a', '--name', 'b'])).toBe('unexpected argument --name');
    expect(createKeyArguments(['--expires-at', 'soon', '--name', 'x'])).toMatch(/^--expires-at: /);
    expect(createKeyArguments(['--force', 'x'])).toBe('unexpected argument --force');
  });
});
