import { preview } from './messages';

describe('preview', () => {
  it('flattens white space and keeps short text whole', () => {
    expect(preview('  a\n\n b\t c ')).toBe('a b c');
    expect(preview(null)).toBe('');
  });

  it('cuts long text between characters, never inside a surrogate pair', () => {
    for (const lead of ['', 'x']) {
      const cut = preview(`${lead}${'𝕏'.repeat(300)}`);
      expect(cut.endsWith('…')).toBe(true);
      expect(cut.isWellFormed()).toBe(true);
      expect(cut.length).toBeLessThanOrEqual(200);
    }
  });
});
