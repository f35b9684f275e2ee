import { z } from 'zod';
import { AppError } from './errors';

export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/** `limit` and `page_token` of every list; query strings arrive as text, hence the strict integer parse. */
export const pageQuery = z.object({
  limit: z
    .union([z.number(), z.string().regex(/^-?\d+$/, 'must be an integer')])
    .transform((v) => Number(v))
    .pipe(z.number().int().min(1, 'must be at least 1').max(PAGE_LIMIT_MAX, `must be at most ${PAGE_LIMIT_MAX}`))
    .default(PAGE_LIMIT_DEFAULT),
  page_token: z.string().min(1).max(512).optional(),
});

export type PageQuery = z.infer<typeof pageQuery>;

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), next_page_token: z.string().nullable() });
}

/** Page tokens are opaque to clients: base64url of a small JSON cursor. */
export function encodePageToken(cursor: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

export function decodePageToken<T extends z.ZodType>(token: string, schema: T): z.infer<T> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(token, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The cursor of a client's page_token (undefined without one); a token this list did not make is a 400. */
export function pageCursor<T extends z.ZodType>(token: string | undefined, schema: T): z.infer<T> | undefined {
  if (!token) return undefined;
  const cursor = decodePageToken(token, schema);
  if (cursor === undefined) throw new AppError('invalid_request', 'page_token is not valid', { details: [{ path: 'page_token', message: 'not a token from this list' }] });
  return cursor;
}
