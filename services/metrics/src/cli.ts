/**
 * `node services/metrics/dist/cli.js replay`: rebuilds the rollups from the EVENTS stream
 * (src/replay.ts), with the metrics service's configuration (DATABASE_URL, NATS_*), as its bus
 * identity. Prints what it read and counted; exits non-zero on failure.
 */
import { createLogger } from '@mailroom/platform';
import { replayRollups } from './replay';

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (args[0] !== 'replay' || args.length !== 1) {
    process.stderr.write('usage: node services/metrics/dist/cli.js replay\n  empties the metrics rollups and counts every event of the EVENTS stream again\n');
    return 2;
  }
  const log = createLogger({ service: 'metrics-replay', level: env.LOG_LEVEL ?? 'info' });
  const result = await replayRollups(env, log);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

if (require.main === module) {
  cli(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`replay failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
