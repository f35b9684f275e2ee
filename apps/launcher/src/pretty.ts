/** The platform's JSON log lines, readable in a terminal (pino-pretty); other lines pass as they are. */
import PinoPretty from 'pino-pretty';
import type { Writable } from 'node:stream';

export function prettyLogs(): Writable {
  return PinoPretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: 1, sync: true });
}
