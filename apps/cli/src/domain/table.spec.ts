import { cell, formatRecord, formatTable } from './table';

describe('formatTable', () => {
  it('aligns columns under an upper-case header', () => {
    const out = formatTable(
      [
        { inbox_id: 'inb_1', address: 'a@x.test' },
        { inbox_id: 'inb_22', address: null },
      ],
      ['inbox_id', 'address'],
    );
    expect(out.split('\n')).toEqual(['INBOX_ID  ADDRESS', 'inb_1     a@x.test', 'inb_22    -']);
  });

  it('says when there is nothing', () => {
    expect(formatTable([], ['id'])).toBe('(none)');
  });
});

describe('cell', () => {
  it('joins lists, shows objects as JSON, flattens whitespace and cuts long text', () => {
    expect(cell(['a', 'b'])).toBe('a, b');
    expect(cell([])).toBe('-');
    expect(cell({ a: 1 })).toBe('{"a":1}');
    expect(cell('one\ntwo')).toBe('one two');
    expect(cell('x'.repeat(100))).toHaveLength(60);
    expect(cell(false)).toBe('false');
  });
});

describe('formatRecord', () => {
  it('prints a field a line, and long fields whole at the end', () => {
    const text = 'Where is my order?\nIt was due Monday.';
    const out = formatRecord({ message_id: 'msg_1', subject: 'Order 7', extracted_text: text }, ['extracted_text']);
    expect(out).toBe(`message_id  msg_1\nsubject     Order 7\n\nextracted_text:\n${text}`);
  });
});
