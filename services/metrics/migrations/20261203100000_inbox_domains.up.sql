-- Per-domain rollups (issue 27). Each event now also counts in the row of all the inboxes on
-- its inbox's custom domain: the key column hourly_counts.inbox_id (and hourly_latency's)
-- holds an inbox's id (inb_...), '*' (all the environment's inboxes) or a domain's id (dom_...:
-- all the inboxes on it). Ids are prefixed, so the three kinds never meet.
--
-- The domain of each inbox, asked once of mailbox and domains and kept for good (an inbox's
-- domain never changes), so redeliveries and replays file an inbox's events under the same
-- domain: src/domain/inbox-domains.ts. domain_id null: on no custom domain (MAIL_DOMAIN, or an
-- inbox already gone when first seen). A replay keeps this table.
--
-- Hours counted before this migration have no domain rows: `node services/metrics/dist/cli.js
-- replay` rebuilds them from the stream (README, "Metrics"; the stream keeps 15 days).
create table inbox_domains (
  org_id text not null,
  env_id text not null,
  inbox_id text not null,
  domain_id text,
  learned_at timestamptz not null default now(),
  primary key (org_id, env_id, inbox_id)
);
-- The top inboxes of a domain's deliverability warnings.
create index inbox_domains_by_domain on inbox_domains (org_id, env_id, domain_id) where domain_id is not null;
