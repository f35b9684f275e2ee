/** Which IP addresses a webhook may reach: the platform's rule (libs/platform ip-policy.ts), shared with auth's SSO fetches. */
export { IpPolicy, ipLiteralOf, parseCidr, parseIp, type BlockReason, type Cidr } from '@mailroom/platform';
