import { AppError } from '@mailroom/contracts';
import { normalizeDomainName } from './domain-name';

const OWN = 'mailroom.example.net';
const refusal = (name: string) => {
  try {
    normalizeDomainName(name, OWN);
  } catch (err) {
    return err instanceof AppError ? [err.code, err.message] : ['not an AppError', String(err)];
  }
  return undefined;
};

describe('domain names', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM. ', 'example.com'],
    ['mail.example.co.uk', 'mail.example.co.uk'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['MÜNCHEN.DE', 'xn--mnchen-3ya.de'],
    ['xn--mnchen-3ya.de', 'xn--mnchen-3ya.de'],
    ['customer.github.io', 'customer.github.io'],
  ])('takes %j as %s', (input, stored) => {
    expect(normalizeDomainName(input, OWN)).toBe(stored);
  });

  it.each([
    ['', /empty/],
    ['example.com..', /empty label/],
    ['.example.com', /empty label/],
    ['exa..mple.com', /empty label/],
    ['1.2.3.4', /IP address/],
    ['0x7f.1', /IP address|number/],
    ['[::1]', /character/],
    ['https://example.com', /character/],
    ['ada@example.com', /character/],
    ['*.example.com', /character/],
    ['exa mple.com', /character/],
    ['ex_ample.com', /label/],
    ['-example.com', /label/],
    [`${'a'.repeat(64)}.com`, /label/],
    ['com', /top-level domain alone/],
    ['co.uk', /public suffix/],
    ['github.io', /public suffix/],
    ['example.localhost', /not a public top-level domain/],
    ['example.invalid', /not a public top-level domain/],
    ['mailroom.example.net', /own mail domain/],
    ['eu.mailroom.example.net', /own mail domain/],
  ])('refuses %j with a 400 saying why', (input, why) => {
    const r = refusal(input);
    expect(r?.[0]).toBe('invalid_request');
    expect(r?.[1]).toMatch(why);
  });
});
