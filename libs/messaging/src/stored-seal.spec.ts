import { randomBytes } from 'node:crypto';
import { BUS_IDENTITIES, PUBLISHED_SUBJECTS } from '@mailroom/contracts';
import { sealedSubjectsOf, storedSeal, subjectKey } from './stored-seal';

const master = randomBytes(32);
const keysOf = (...subjects: string[]) => new Map(subjects.map((s) => [s, subjectKey(master, s)]));
const data = Buffer.from('{"raw_id":"raw_1"}');

describe('stored seals', () => {
  it('checks what the subject\'s publisher sealed, for that subject on the wire and that body', () => {
    const ingest = storedSeal(keysOf('mail.inbound', 'mail.feedback'));
    const mailbox = storedSeal(keysOf('mail.inbound'));
    const header = ingest.seal('mail.inbound', 'ns1.mail.inbound', data)!;
    expect(mailbox.check('mail.inbound', 'ns1.mail.inbound', data, header)).toBe(true);
    expect(mailbox.check('mail.inbound', 'ns2.mail.inbound', data, header)).toBe(false);
    expect(mailbox.check('mail.inbound', 'ns1.mail.inbound', Buffer.from('{"raw_id":"raw_2"}'), header)).toBe(false);
  });

  it('refuses a seal of another subject, and anything it holds no key for', () => {
    const ingest = storedSeal(keysOf('mail.inbound', 'mail.feedback'));
    const feedback = ingest.seal('mail.feedback', 'mail.feedback', data)!;
    expect(ingest.check('mail.inbound', 'mail.inbound', data, feedback)).toBe(false);
    const mailSend = storedSeal(keysOf('mail.feedback'));
    expect(mailSend.seal('mail.inbound', 'mail.inbound', data)).toBeUndefined();
    expect(mailSend.check('mail.inbound', 'mail.inbound', data, ingest.seal('mail.inbound', 'mail.inbound', data))).toBe(false);
  });

  it.each([undefined, '', 'x', 'A'.repeat(43), 'A'.repeat(44)])('answers false to the header %p without throwing', (header) => {
    expect(storedSeal(keysOf('mail.inbound')).check('mail.inbound', 'mail.inbound', data, header)).toBe(false);
  });

  it('gives an identity the keys of what it publishes and reads, and nothing else', () => {
    // mail-ingest and mail-send follow DOMAINS_FACTS (which names the edge takes; which keys sign).
    expect(sealedSubjectsOf('mail-ingest').sort()).toEqual(['internal.domains.domain.changed', 'mail.feedback', 'mail.inbound']);
    expect(sealedSubjectsOf('mail-send')).toContain('internal.domains.domain.changed');
    expect(sealedSubjectsOf('mail-send').some((s) => s.startsWith('internal.orgs.') || s.startsWith('internal.auth.'))).toBe(false);
    expect(sealedSubjectsOf('mailbox').sort()).toEqual(['events.message.received', 'internal.orgs.environment.deleted', 'mail.inbound', 'mail.outbound']);
    // A consumer filtered to one fact holds that fact's key, not those of the rest of its stream.
    expect(sealedSubjectsOf('auth').sort()).toEqual(['audit.auth', 'internal.auth.apikey.revoked', 'internal.auth.session.revoked', 'internal.orgs.environment.deleted', 'mail.account']);
    expect(sealedSubjectsOf('webhooks')).toEqual(expect.arrayContaining(PUBLISHED_SUBJECTS.filter((s) => s.startsWith('events.'))));
    expect(sealedSubjectsOf('webhooks').some((s) => s.startsWith('mail.'))).toBe(false);
    expect(sealedSubjectsOf('gateway').sort()).toEqual(PUBLISHED_SUBJECTS.filter((s) => s.startsWith('internal.auth.') || s.startsWith('internal.orgs.')).sort());
    expect(sealedSubjectsOf('migrate')).toEqual([]);
  });

  it('leaves no stored subject without a reader that holds its key', () => {
    const held = new Set(BUS_IDENTITIES.flatMap((i) => sealedSubjectsOf(i)));
    for (const subject of PUBLISHED_SUBJECTS) expect([subject, held.has(subject)]).toEqual([subject, true]);
  });
});
