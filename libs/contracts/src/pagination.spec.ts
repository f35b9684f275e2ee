import { z } from 'zod';
import { decodePageToken, encodePageToken, pageQuery } from './pagination';

describe('pagination', () => {
  it('defaults limit to 20 and accepts 1..100 as text or number', () => {
    expect(pageQuery.parse({})).toEqual({ limit: 20 });
    expect(pageQuery.parse({ limit: '1' }).limit).toBe(1);
    expect(pageQuery.parse({ limit: 100 }).limit).toBe(100);
  });

  it.each(['0', '-1', '101', '1000', '1.5', 'ten', '', ' 5'])('refuses limit=%p', (limit) => {
    expect(pageQuery.safeParse({ limit }).success).toBe(false);
  });

  it('round-trips tokens and refuses foreign ones', () => {
    const schema = z.object({ before: z.string() });
    expect(decodePageToken(encodePageToken({ before: 'key_1' }), schema)).toEqual({ before: 'key_1' });
    expect(decodePageToken('not-base64-json', schema)).toBeUndefined();
    expect(decodePageToken(encodePageToken({ after: 'x' }), schema)).toBeUndefined();
  });
});
