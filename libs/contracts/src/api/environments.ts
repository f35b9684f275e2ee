/** HTTP and RPC shapes of environments and their members. */
import { z } from 'zod';
import { idSchema } from '../ids';
import { pageOf } from '../pagination';
import { roleSchema } from '../permissions';
import { isoTimestamp } from '../time';
import { environment } from './accounts';

export const ENVIRONMENT_NAME_MAX = 64;

/** A name people read in a picker: letters, digits, spaces, `-`, `_` and `.`, starting with a letter or digit. */
export const environmentName = z
  .string()
  .trim()
  .min(1, 'give the environment a name')
  .max(ENVIRONMENT_NAME_MAX, `an environment name has at most ${ENVIRONMENT_NAME_MAX} characters`)
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._-]*$/u, 'an environment name holds letters, digits, spaces, "-", "_" and ".", and starts with a letter or digit');

export const environmentCreateBody = z.strictObject({ name: environmentName });
export const environmentUpdateBody = z.strictObject({ name: environmentName });
export const environmentParam = z.object({ env_id: idSchema('environment') });
export const environmentList = pageOf(environment);

/** A member of the organization who may act in the environment. */
export const environmentMember = z.object({
  env_id: idSchema('environment'),
  member_id: idSchema('member'),
  user_id: idSchema('user'),
  role: roleSchema,
  email: z.string().nullable(),
  name: z.string().nullable(),
  /** When they were given the environment (for the default environment: when they joined the organization). */
  created_at: isoTimestamp,
});
export type EnvironmentMember = z.infer<typeof environmentMember>;
export const environmentMemberList = pageOf(environmentMember);
export const environmentMemberAddBody = z.strictObject({ member_id: idSchema('member') });
export const environmentMemberParams = environmentParam.extend({ member_id: idSchema('member') });

/** For services only: what the tenant has in one environment (deleting it needs none). */
export const environmentScope = z.object({ org_id: idSchema('organization'), env_id: idSchema('environment') });
export const resourceCount = z.object({ count: z.number().int().nonnegative() });
