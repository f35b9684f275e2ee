/** A person as the API shows them. */
import type { User } from '@mailroom/contracts';
import type { UserRow } from '../repo/user.repository';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    email_verified: row.email_verified_at !== null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
