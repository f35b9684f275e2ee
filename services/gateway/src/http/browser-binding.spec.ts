import { cookieValue } from './browser-binding';

describe('cookieValue', () => {
  it('finds a cookie among others, the first of a name, nothing when absent', () => {
    expect(cookieValue('a=1; mailroom_login=mrb_x; b=2', 'mailroom_login')).toBe('mrb_x');
    expect(cookieValue('mailroom_login=one;mailroom_login=two', 'mailroom_login')).toBe('one');
    expect(cookieValue('xmailroom_login=1', 'mailroom_login')).toBeUndefined();
    expect(cookieValue(undefined, 'mailroom_login')).toBeUndefined();
  });
});
