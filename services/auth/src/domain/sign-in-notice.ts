/**
 * The new-sign-in notice: when a sign-in opens a session from a client the account's
 * sessions have not been used from in the last 90 days, the person is mailed when, from
 * which address and with which User-Agent, and what to do if it was not them.
 *
 * A client is the family of its User-Agent (browser and operating system, or the program's
 * name: no versions, so an update is not a new client) and the network of its address (IPv4
 * /24, IPv6 /64: addresses that change within one network, a DHCP lease or an IPv6 privacy
 * address, are not new clients). "Seen" means a session of the account, live or ended, last
 * used (signed in or refreshed) within 90 days from that client; a session remembers where it
 * was last used from, so earlier clients of a long session are forgotten.
 */
import Bowser from 'bowser';
import ipaddr from 'ipaddr.js';
import { newId } from '@mailroom/contracts';
import type { SeenClient } from '../repo/session-history.repository';
import type { AuthTx } from '../repo/tables';
import type { AccountOutbox, ClientInfo } from './ports';
import { recordedClient } from './sessions';

export const NOTICE_LOOKBACK_MS = 90 * 86_400_000;
/** Distinct clients read per sign-in; past them a sign-in counts as new. */
const MAX_CLIENTS_READ = 1_000;
const UNKNOWN = 'an unknown client';

/** How the person proved who they were. */
export type SignInMethod = 'password' | 'password_and_mfa' | 'provider' | 'sso';

/** The client in words, from its User-Agent: "Firefox on Linux", "curl"; no version. */
export function familyOf(userAgent: string | null): string {
  if (!userAgent) return UNKNOWN;
  const parsed = Bowser.parse(userAgent);
  // Bowser names what it does not know from the User-Agent's first words; a name without a letter or digit is no name.
  const browser = parsed.browser.name && /[A-Za-z0-9]/.test(parsed.browser.name) ? parsed.browser.name.slice(0, 100) : undefined;
  if (browser) return parsed.os.name ? `${browser} on ${parsed.os.name}` : browser;
  // Not a browser: a program names itself first (curl/8.4.0, python-requests/2.31).
  return /^[A-Za-z0-9._-]{1,100}/.exec(userAgent)?.[0] ?? UNKNOWN;
}

/** The network of an address: IPv4 /24, IPv6 /64; null when there is none. */
export function networkOf(ip: string | null): string | null {
  if (!ip || !ipaddr.isValid(ip)) return null;
  const addr = ipaddr.process(ip);
  const bits = addr.kind() === 'ipv4' ? 24 : 64;
  const network = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}

const clientKey = (c: SeenClient) => `${familyOf(c.user_agent)}\n${networkOf(c.ip) ?? ''}`;

/** Whether `client` is none of the clients `seen`. */
export function isNewClient(client: SeenClient, seen: readonly SeenClient[]): boolean {
  const key = clientKey(client);
  return !seen.some((s) => clientKey(s) === key);
}

/** The account's recent clients (repo/session-history.repository.ts). */
export interface SessionHistory {
  clientsSince(userId: string, since: Date, limit: number, tx: AuthTx): Promise<SeenClient[]>;
}

export class SignInNotices {
  constructor(
    private readonly history: SessionHistory,
    private readonly outbox: Pick<AccountOutbox, 'mail' | 'kick'>,
  ) {}

  /**
   * In the sign-in's transaction, before its session is written: queues the notice when the
   * client is new to the account. Answers whether it did (then `kick` after the commit).
   */
  async queue(tx: AuthTx, user: { id: string; email: string }, client: ClientInfo, how: SignInMethod, now: Date): Promise<boolean> {
    const seen = recordedClient(client);
    const recent = await this.history.clientsSince(user.id, new Date(now.getTime() - NOTICE_LOOKBACK_MS), MAX_CLIENTS_READ, tx);
    if (!isNewClient({ ip: seen.ip, user_agent: seen.userAgent }, recent)) return false;
    await this.outbox.mail(tx, {
      id: newId('systemMail'),
      to: user.email,
      template: 'new_sign_in',
      data: { signed_in_at: now.toISOString(), ip: seen.ip, user_agent: seen.userAgent, client: familyOf(seen.userAgent), with: how },
    });
    return true;
  }

  /** Sends what was committed now. */
  kick(): void {
    this.outbox.kick();
  }
}
