/**
 * The providers linked to a person's account: listed (oldest link first, one per provider,
 * so never more than one page), and unlinked unless it is the last way to sign in. The
 * account's row is locked while an unlink decides, so two unlinks at once cannot each leave
 * the other as the only way in and both go.
 */
import type { OAuthLink } from '@mailroom/contracts';
import { AppError } from '@mailroom/contracts';
import type { OAuthIdentityRow, OAuthRepository } from '../repo/oauth.repository';
import { unlinkRefusal } from './oauth-rules';
import type { Transact } from './ports';

export function toLink(row: OAuthIdentityRow): OAuthLink {
  return { provider: row.provider, email: row.email, linked_at: row.linked_at.toISOString(), last_used_at: row.last_used_at?.toISOString() ?? null };
}

export class OAuthLinks {
  constructor(
    private readonly transact: Transact,
    private readonly identities: Pick<OAuthRepository, 'listIdentities' | 'deleteIdentity' | 'lockAccount'>,
    /** Whether a provider of this name is configured now. */
    private readonly configured: (provider: string) => boolean,
  ) {}

  async list(userId: string): Promise<{ data: OAuthLink[]; next_page_token: null }> {
    return { data: (await this.identities.listIdentities(userId)).map(toLink), next_page_token: null };
  }

  async unlink(userId: string, provider: string): Promise<void> {
    await this.transact(async (tx) => {
      const account = await this.identities.lockAccount(userId, tx);
      if (!account) throw AppError.notFound('user');
      const linked = (await this.identities.listIdentities(userId, tx)).map((i) => i.provider);
      const refusal = unlinkRefusal(provider, account, linked, this.configured);
      if (refusal) throw refusal;
      await this.identities.deleteIdentity(userId, provider, tx);
    });
  }
}
