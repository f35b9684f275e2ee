import { checkBounce, checkDkim, checkDmarc, checkMx, checkSpf, mergeSpf, recordsOf, type RecordSettings } from './records';

const s: RecordSettings = { mxHost: 'mx.mailroom.test', spfInclude: 'spf.mailroom.test', dmarcRua: 'dmarc@mailroom.test', bounceTarget: 'bounces.mailroom.test' };
const at = '2026-11-28T10:00:00.000Z';
const found = <T>(...values: T[]) => ({ kind: 'found' as const, values });
const none = { kind: 'none' as const };
const timeout = { kind: 'temporary' as const, error: 'ETIMEOUT' };

describe('the records of a domain', () => {
  it('lists MX, SPF, DKIM, DMARC and the bounce CNAME, SPF and DKIM required, all pending before a check', () => {
    const records = recordsOf({ name: 'example.com', dkimSelector: 'mrabcdefgh', dkimPublicKey: 'AAAA' }, s, {});
    expect(records.map((r) => [r.kind, r.type, r.name, r.value, r.required, r.status])).toEqual([
      ['mx', 'MX', 'example.com', 'mx.mailroom.test', false, 'pending'],
      ['spf', 'TXT', 'example.com', 'v=spf1 include:spf.mailroom.test ~all', true, 'pending'],
      ['dkim', 'TXT', 'mrabcdefgh._domainkey.example.com', 'v=DKIM1; k=rsa; p=AAAA', true, 'pending'],
      ['dmarc', 'TXT', '_dmarc.example.com', 'v=DMARC1; p=none; rua=mailto:dmarc@mailroom.test', false, 'pending'],
      ['bounce', 'CNAME', 'bounces.example.com', 'bounces.mailroom.test', false, 'pending'],
    ]);
    expect(records[0]!.priority).toBe(10);
    expect(recordsOf({ name: 'example.com', dkimSelector: 'x', dkimPublicKey: 'A' }, { ...s, dmarcRua: null }, {})[3]!.value).toBe('v=DMARC1; p=none');
  });

  it('advises one merged SPF record when the domain has one without our include', () => {
    expect(mergeSpf('v=spf1 include:_spf.google.com ~all', 'spf.mailroom.test')).toBe('v=spf1 include:_spf.google.com include:spf.mailroom.test ~all');
    expect(mergeSpf('v=spf1 mx redirect=_spf.example.net', 'spf.mailroom.test')).toBe('v=spf1 mx include:spf.mailroom.test redirect=_spf.example.net');
    expect(mergeSpf('v=spf1 a', 'spf.mailroom.test')).toBe('v=spf1 a include:spf.mailroom.test');
    const check = checkSpf(found('v=spf1 include:_spf.google.com -all', 'google-site-verification=x'), s, at);
    expect(check).toMatchObject({ status: 'failed', reason: 'mismatch', found: ['v=spf1 include:_spf.google.com -all'], advice: 'v=spf1 include:_spf.google.com include:spf.mailroom.test -all' });
    const records = recordsOf({ name: 'example.com', dkimSelector: 'x', dkimPublicKey: 'A' }, s, { spf: check });
    expect(records[1]!.value).toBe('v=spf1 include:_spf.google.com include:spf.mailroom.test -all');
  });

  it('reads SPF: ours included, missing, two records, a timeout', () => {
    expect(checkSpf(found('v=spf1 include:SPF.mailroom.test ~all'), s, at).status).toBe('verified');
    expect(checkSpf(found('v=spf1 ip4:192.0.2.1 +include:spf.mailroom.test -all'), s, at).status).toBe('verified');
    expect(checkSpf(found('some other text'), s, at)).toMatchObject({ status: 'failed', reason: 'missing' });
    expect(checkSpf(none, s, at)).toMatchObject({ status: 'failed', reason: 'missing' });
    expect(checkSpf(found('v=spf1 include:spf.mailroom.test ~all', 'v=spf1 -all'), s, at)).toMatchObject({ status: 'failed', reason: 'mismatch' });
    expect(checkSpf(timeout, s, at)).toMatchObject({ status: 'temporary_failure', reason: 'temporary_failure' });
  });

  it('reads DKIM by its p= tag, whitespace and tag order aside', () => {
    expect(checkDkim(found('v=DKIM1; k=rsa; p=ABC DEF'), 'ABCDEF', at).status).toBe('verified');
    expect(checkDkim(found('p=ABCDEF;v=DKIM1'), 'ABCDEF', at).status).toBe('verified');
    expect(checkDkim(found('v=DKIM1; k=rsa; p=OTHER'), 'ABCDEF', at)).toMatchObject({ status: 'failed', reason: 'mismatch', found: ['v=DKIM1; k=rsa; p=OTHER'] });
    expect(checkDkim(none, 'ABCDEF', at)).toMatchObject({ reason: 'missing' });
    expect(checkDkim(timeout, 'ABCDEF', at).status).toBe('temporary_failure');
  });

  it('reads DMARC (any one policy), MX (ours among them) and the bounce CNAME', () => {
    expect(checkDmarc(found('v=DMARC1; p=reject'), at).status).toBe('verified');
    expect(checkDmarc(found('v=DMARC1; p=none', 'v=DMARC1; p=reject'), at).reason).toBe('mismatch');
    expect(checkDmarc(found('v=spf1 -all'), at).reason).toBe('missing');
    expect(checkMx(found({ exchange: 'MX.mailroom.test.', priority: 20 }, { exchange: 'other.example', priority: 10 }), s, at).status).toBe('verified');
    expect(checkMx(found({ exchange: 'aspmx.l.google.com', priority: 1 }), s, at)).toMatchObject({ reason: 'mismatch', found: ['1 aspmx.l.google.com'] });
    expect(checkMx(none, s, at).reason).toBe('missing');
    expect(checkBounce(found('bounces.mailroom.test'), s, at).status).toBe('verified');
    expect(checkBounce(found('elsewhere.example'), s, at)).toMatchObject({ reason: 'mismatch', found: ['elsewhere.example'] });
    expect(checkBounce(timeout, s, at).status).toBe('temporary_failure');
  });
});
