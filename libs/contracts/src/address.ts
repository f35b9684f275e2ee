/** An email address as the API accepts it: trimmed, at most 254 characters, lower-cased. */
import { z } from 'zod';

export const emailAddress = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email('must be an email address'))
  .transform((v) => v.toLowerCase());
