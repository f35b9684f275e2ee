// Four webhook receivers on loopback, in their own process (forked by bench/webhooks.mjs) so
// they do not share an event loop with the publisher. Each answers 204 at once and notes
// when each event id arrived at it (epoch ms, sub-millisecond); the parent asks over IPC.
import { createServer } from 'node:http';

const servers = [];
let arrivals = new Map();
let count = 0;
const now = () => performance.timeOrigin + performance.now();

for (let i = 0; i < 4; i++) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      res.writeHead(204).end();
      count++;
      // Event id without parsing the whole body: it is the first field of the envelope.
      const text = Buffer.concat(chunks).toString('utf8', 0, 64);
      const id = /"id":"([^"]+)"/.exec(text)?.[1];
      if (id) {
        // One delivery is one event at one receiver.
        const key = `${i} ${id}`;
        const list = arrivals.get(key);
        if (list) list.push(at);
        else arrivals.set(key, [at]);
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
}

process.send({ ports: servers.map((s) => s.address().port) });
process.on('message', (m) => {
  if (m === 'count') process.send({ count });
  else if (m === 'reset') {
    arrivals = new Map();
    count = 0;
    process.send({ reset: true });
  } else if (m === 'arrivals') {
    // Each delivery's first arrival is what latency is about (a repeat is a duplicate): per event
    // and receiver, the event id, the earliest arrival and how many arrived.
    process.send({ arrivals: [...arrivals].map(([key, list]) => [key.slice(key.indexOf(' ') + 1), Math.min(...list), list.length]) });
  } else if (m === 'exit') process.exit(0);
});
