/**
 * Outbound HTTP to organizations' identity providers, which their admins name: the guarded
 * fetch of libs/platform (the SSRF guard of webhooks' deliveries, also used by admin's alert
 * webhook). Non-public ranges are reachable only when the operator allows them
 * (SSO_ALLOWED_CIDRS: development and tests).
 */
export { BlockedDestinationError, guardedFetch, isBlocked, type GuardedFetch } from '@mailroom/platform';
