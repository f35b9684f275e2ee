import { z } from 'zod';

/** ISO 8601 UTC with milliseconds, e.g. 2026-11-22T08:00:00.000Z: the only timestamp format on the wire. */
export const isoTimestamp = z.iso.datetime({ precision: 3 });

export function toIso(date: Date): string {
  return date.toISOString();
}
