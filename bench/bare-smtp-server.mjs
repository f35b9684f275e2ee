// The bare limit for bench:ingest: smtp-server accepting every recipient and discarding every
// message, with the same connection options as the edge (no reverse lookup, same size limit).
import { SMTPServer } from 'smtp-server';

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  hideSTARTTLS: true,
  disableReverseLookup: true,
  size: 25 * 1024 * 1024,
  maxClients: 2000,
  logger: false,
  onRcptTo: (_a, _s, cb) => cb(),
  onData(stream, _session, cb) {
    stream.on('end', () => cb());
    stream.resume();
  },
});
// The port: the first argument, else a free one.
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.send?.({ port: server.server.address().port }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
