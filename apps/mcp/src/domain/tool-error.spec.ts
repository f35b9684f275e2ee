import { ERROR_CODES } from '@mailroom/contracts';
import { FIXES, fixFor } from './fixes';
import { toToolError } from './tool-error';

describe('tool errors', () => {
  it('carry a one-line fix for every error code of the API', () => {
    for (const code of Object.keys(ERROR_CODES)) expect(fixFor(code)).toBe(FIXES[code as keyof typeof FIXES]);
    for (const fix of Object.values(FIXES)) expect(fix).toMatch(/^[^\n]{10,200}$/);
  });

  it("keep the API's code, message, request id, details and Retry-After", () => {
    const err = Object.assign(new Error('limit: at most 100'), { status: 400, code: 'invalid_request', requestId: 'req_1', details: [{ path: 'limit', message: 'at most 100' }], retryAfter: undefined });
    expect(toToolError(err)).toEqual({ code: 'invalid_request', message: 'limit: at most 100', fix: FIXES.invalid_request, status: 400, request_id: 'req_1', details: [{ path: 'limit', message: 'at most 100' }] });
    expect(toToolError({ status: 429, code: 'rate_limited', message: 'slow down', retryAfter: 7 })).toMatchObject({ code: 'rate_limited', retry_after: 7, fix: expect.stringContaining('wait') });
  });

  it('give a fix for codes the API does not have (no answer, a bad argument) and for anything thrown', () => {
    expect(toToolError({ status: 0, code: 'network_error', message: 'no answer' }).fix).toContain('MAILROOM_BASE_URL');
    expect(toToolError(new TypeError('boom'))).toMatchObject({ code: 'internal_error', message: 'boom', fix: FIXES.internal_error });
    expect(fixFor('something_new', 502)).toBe(FIXES.internal_error);
  });
});
