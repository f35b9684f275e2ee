-- The trace of the work that wrote a row (W3C traceparent, libs/runtime Outbox): the relay
-- publishes the row in that trace, whichever instance relays it and however much later.
-- Null with telemetry off, and for rows written before.
alter table outbox add column if not exists traceparent text;
