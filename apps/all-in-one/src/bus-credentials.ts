/**
 * `bus-credentials <dir> [--namespace <ns>] [--force]` and `--reissue <identity>`: the
 * command that writes the bus's credentials (libs/messaging credentials.ts). Every bad
 * argument is a one-line usage error (exit 2); a problem with the directory is one line too
 * (exit 1), never a stack trace.
 */
import { BUS_IDENTITIES, type BusIdentity } from '@mailroom/contracts';
import { Namespace, refreshStaleIdentities, reissueIdentity, writeBusCredentials } from '@mailroom/messaging';

export const BUS_USAGE = `usage: bus-credentials <dir> [--namespace <ns>] [--force]
       bus-credentials <dir> --reissue <identity> [--namespace <ns>]
       bus-credentials <dir> --refresh [--namespace <ns>]
  Writes a new NATS operator into <dir>: nats-auth.conf (include it in nats-server's
  configuration), operator.nk, system.nk, account.nk and bus-master.key (keep them offline),
  one <identity>.creds, <identity>.seal-key and <identity>.subject-keys per identity
  (${BUS_IDENTITIES.join(', ')}), and seal-master.key. Each service gets its three files, the
  gateway seal-master.key too (NATS_CREDENTIALS_DIR).
  --namespace  the deployment's BUS_NAMESPACE, when it has one
  --force      replace existing credentials (every service then needs its new file)
  --reissue    a new credential for one identity from the kept keys; the old one is revoked
               in a new nats-auth.conf once nats-server reloads it (kill -HUP)
  --refresh    after an upgrade: mint again, from the kept keys, the creds and subject keys
               the new permission table changed (no server change needed)
`;

export class UsageError extends Error {}

export type BusCommand =
  | { help: true }
  | { help: false; dir: string; namespace: string; force: boolean; refresh: boolean; reissue?: BusIdentity };

/** The arguments after `bus-credentials`, checked; throws UsageError naming what is wrong. */
export function parseBusArgs(args: string[]): BusCommand {
  if (args.includes('--help')) return { help: true };
  const [dir, ...rest] = args;
  if (!dir || dir.startsWith('--')) throw new UsageError('bus-credentials needs the directory to write to');
  let namespace = '';
  let force = false;
  let refresh = false;
  let reissue: BusIdentity | undefined;
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]!;
    const value = () => {
      const v = rest[++i];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--force') force = true;
    else if (flag === '--refresh') refresh = true;
    else if (flag === '--namespace') namespace = value();
    else if (flag === '--reissue') {
      const identity = value();
      if (!(BUS_IDENTITIES as readonly string[]).includes(identity)) throw new UsageError(`--reissue takes one of ${BUS_IDENTITIES.join(', ')}, not "${identity}"`);
      reissue = identity as BusIdentity;
    } else throw new UsageError(`unknown argument "${flag}"`);
  }
  try {
    new Namespace(namespace);
  } catch {
    throw new UsageError(`--namespace takes letters, digits, _ and - only, not "${namespace}"`);
  }
  if ([force, refresh, reissue !== undefined].filter(Boolean).length > 1) throw new UsageError('--force, --refresh and --reissue do not go together: --force replaces every credential, --refresh and --reissue keep the keys');
  return { help: false, dir, namespace, force, refresh, ...(reissue ? { reissue } : {}) };
}

export async function busCredentials(args: string[]): Promise<void> {
  let command: BusCommand;
  try {
    command = parseBusArgs(args);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${BUS_USAGE}`);
    process.exit(2);
  }
  if (command.help) {
    process.stdout.write(BUS_USAGE);
    return;
  }
  const { dir, namespace, force, refresh, reissue } = command;
  try {
    if (refresh) {
      const files = await refreshStaleIdentities(dir, { namespace });
      process.stdout.write(files.length ? `wrote ${files.join(', ')} in ${dir}: give each service its new files, then restart it\n` : `${dir} is up to the permission table: nothing to write\n`);
      return;
    }
    if (reissue) {
      const files = await reissueIdentity(dir, reissue, { namespace });
      process.stdout.write(`wrote ${files.join(', ')} in ${dir}: give ${reissue} its new credential, put the new nats-auth.conf where nats-server reads it and reload it (kill -HUP) to revoke the old one\n`);
      return;
    }
    const files = await writeBusCredentials(dir, { namespace, force });
    process.stdout.write(`wrote ${files.length} files to ${dir}: include nats-auth.conf in nats-server's configuration; give each service its <name>.creds, <name>.seal-key and <name>.subject-keys, and the gateway seal-master.key too (NATS_CREDENTIALS_DIR); keep operator.nk, system.nk, account.nk and bus-master.key offline\n`);
  } catch (err) {
    // An existing, missing or unreadable file: its message names it.
    process.stderr.write(`bus-credentials: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
