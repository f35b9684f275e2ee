-- The trace of a send's hand-over (its span's W3C traceparent), kept so the delivery reports
-- and complaints about it, which arrive in traces of their own, link to it. Null with
-- telemetry off, and for sends handed over before.
alter table sends add column if not exists traceparent text;
