/** The auth service, over NATS, as the orgs domain's UsersPort. */
import { newId } from '@mailroom/contracts';
import type { RpcClient } from '@mailroom/messaging';
import type { UsersPort } from '../domain/ports';

export function usersClient(rpc: RpcClient): UsersPort {
  return {
    // One call per page of members (a page holds at most USER_PROFILES_MAX).
    profiles: async (user_ids) => (await rpc.asService('orgs', 'auth.user.profiles', { user_ids }, { requestId: newId('request') })).data,
  };
}
