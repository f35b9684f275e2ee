import { normalizeSubject, parentIds, subjectsAgree } from './threading';

describe('threading', () => {
  it.each([
    ['Re: Lunch', 'lunch'],
    ['RE: re: Fwd: Lunch  plans', 'lunch plans'],
    ['AW: WG: Termin', 'termin'],
    ['Re[2]: Lunch', 'lunch'],
    ['[list] Re: Lunch', 'lunch'],
    ['[JIRA-12] Build broken', '[jira-12] build broken'],
    ['Réunion', 'réunion'],
    ['', ''],
  ])('normalizes %p to %p', (subject, expected) => {
    expect(normalizeSubject(subject)).toBe(expected);
  });

  it('joins only when subjects agree, or one is empty', () => {
    expect(subjectsAgree('Re: Lunch', 'lunch')).toBe(true);
    expect(subjectsAgree('Something else', 'lunch')).toBe(false);
    expect(subjectsAgree('', 'lunch')).toBe(true);
  });

  it('lists parents nearest first, once each', () => {
    expect(parentIds('c@x', ['a@x', 'b@x', 'c@x'])).toEqual(['c@x', 'b@x', 'a@x']);
    expect(parentIds(null, [])).toEqual([]);
  });
});
