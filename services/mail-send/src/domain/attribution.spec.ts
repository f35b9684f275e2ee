import { attributeRecipients, feedbackMeaning } from './attribution';

describe('attributeRecipients', () => {
  const sent = ['ada@one.test', 'bob@two.test', 'cat@two.test'];

  it('keeps the named recipients the message was sent to, in the send’s spelling, once each', () => {
    expect(attributeRecipients(['BOB@two.test', 'bob@two.test', 'ada@one.test'], sent)).toEqual(['bob@two.test', 'ada@one.test']);
  });

  it('drops names the message was not sent to (redacted, forwarded)', () => {
    expect(attributeRecipients(['redacted@example.net', 'cat@two.test'], sent)).toEqual(['cat@two.test']);
    expect(attributeRecipients(['redacted@example.net'], sent)).toEqual([]);
  });

  it('names nobody of a message to several when the report names none of them', () => {
    expect(attributeRecipients([], sent)).toEqual([]);
  });

  it('names the only recipient of a message to one, named or not', () => {
    expect(attributeRecipients([], ['solo@one.test'])).toEqual(['solo@one.test']);
    expect(attributeRecipients(['xxxxxx@one.test'], ['solo@one.test'])).toEqual(['solo@one.test']);
    expect(attributeRecipients([], ['Solo@one.test', 'solo@one.test'])).toEqual(['Solo@one.test']);
  });
});

describe('feedbackMeaning', () => {
  it.each([
    ['abuse', 'complaint'],
    ['fraud', 'complaint'],
    ['virus', 'complaint'],
    ['other', 'complaint'],
    ['', 'complaint'],
    ['opt-out', 'unsubscribe'],
    ['not-spam', 'none'],
    ['auth-failure', 'none'],
    ['dmarc-report', 'none'],
  ] as const)('%s -> %s', (type, meaning) => {
    expect(feedbackMeaning(type)).toBe(meaning);
  });
});
