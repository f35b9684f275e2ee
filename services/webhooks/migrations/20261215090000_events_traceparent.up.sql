-- The trace of an event's handling (W3C traceparent, written by the fan-out; by recovery, the
-- trace its message was published in): every delivery attempt of the event runs as its
-- child, whichever instance claims it and however much later. Null with telemetry off, and
-- for events stored before.
alter table events add column if not exists traceparent text;
