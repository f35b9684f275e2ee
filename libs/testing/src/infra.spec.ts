import { shownUrl } from './infra';

it('masks the password of a server URL shown in a message, and only that', () => {
  expect(shownUrl('postgres://ci:hunter2@127.0.0.1:5432/x')).toBe('postgres://ci:***@127.0.0.1:5432/x');
  expect(shownUrl('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
  expect(shownUrl('postgres://ci:ab/cd@db/x')).toBe('(a URL that does not parse)');
});
