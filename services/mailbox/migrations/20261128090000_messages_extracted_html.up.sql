-- extracted_html (issue 29): the HTML part without quoted history, sanitized; null for
-- messages without an HTML part and for those stored before it was computed.
alter table messages add column extracted_html text;
