/**
 * Ids of the events mail-send writes to its outbox, increasing in the order they are made,
 * also within one millisecond: the outbox publishes in id order, so the events of one
 * message made by this process (sent, then what its reports say) go out in that order.
 */
import { monotonicIds } from '@mailroom/contracts';

export const newEventId = monotonicIds('event');
