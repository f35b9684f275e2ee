/**
 * Bounded caches whose entries expire a fixed time after they were set (lru-cache), counted
 * on a clock that tests can move.
 */
import { LRUCache } from 'lru-cache';

export interface TtlCacheOptions {
  /** Entries kept at most; the least recently used goes first. */
  max: number;
  /** An entry is fresh while it is younger than this (whole milliseconds, at least 1). */
  ttlMs: number;
  /** The clock, in milliseconds. */
  now?: () => number;
}

/** lru-cache's bound on keys and values: anything but null and undefined. */
type Defined = NonNullable<unknown>;

/** What callers use: lru-cache's TTL figures (getRemainingTTL, info) would be in our units below. */
export type TtlCache<K extends Defined, V extends Defined> = Pick<LRUCache<K, V>, 'get' | 'set' | 'delete' | 'clear' | 'entries' | 'purgeStale' | 'size'>;

export function ttlCache<K extends Defined, V extends Defined>({ max, ttlMs, now = Date.now }: TtlCacheOptions): TtlCache<K, V> {
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be a whole number of milliseconds, at least 1: ${ttlMs}`);
  return new LRUCache<K, V>({
    max,
    // lru-cache keeps an entry while its age is at most `ttl`; ours is fresh while younger than
    // ttlMs. Counted in half milliseconds, an age of at most 2 ttlMs - 1 is exactly that on a
    // millisecond clock, for every ttlMs (`ttl: ttlMs - 1` could not say 1 ms: 0 means no TTL).
    ttl: 2 * ttlMs - 1,
    // + 1: lru-cache takes a start time of 0 for "no TTL" (a test's clock may start at 0).
    perf: { now: () => 2 * now() + 1 },
    // Read the clock at every check rather than once per real millisecond: a test moves it.
    ttlResolution: 0,
  });
}
