/**
 * A NATS transport that writes everything queued during one turn of the event loop in one
 * socket write. nats.js flushes once per microtask checkpoint, so under load every request
 * and every reply becomes its own write(2); on loopback and in containers each costs more
 * CPU than the JavaScript around it. Deferring the write to setImmediate (after the I/O
 * callbacks of the current turn) lets concurrent requests share it, at the price of the
 * rest of that turn in latency. Frames keep their order; a frame's promise resolves when
 * its write completes, as with the stock transport.
 *
 * It subclasses the Node transport of @nats-io/transport-node and sets nats-core's transport
 * factory: neither is public API. Kept because it measured more than 15% faster than the
 * library's connect (docs/decisions.md, "nats.js through its public API"); the version is
 * pinned, and messaging.int.spec.ts fails if an upgrade stops a bus's writes going through it.
 */
import { NodeTransport, nodeResolveHost } from '@nats-io/transport-node/lib/node_transport';
import { NatsConnectionImpl, setTransportFactory, type ConnectionOptions, type NatsConnection } from '@nats-io/nats-core/internal';

interface Pending {
  frame: Uint8Array;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class CoalescingTransport extends NodeTransport {
  private pending: Pending[] = [];
  private scheduled = false;

  override _send(frame: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ frame, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const socket = this.socket;
    if (this.isClosed || socket === undefined) {
      for (const p of batch) p.resolve();
      return;
    }
    const data = batch.length === 1 ? batch[0]!.frame : Buffer.concat(batch.map((p) => p.frame));
    try {
      socket.write(data, (err) => {
        for (const p of batch) {
          if (err) p.reject(err);
          else p.resolve();
        }
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

/** Like @nats-io/transport-node's connect, with the coalescing transport. */
export function connectCoalescing(opts: ConnectionOptions): Promise<NatsConnection> {
  setTransportFactory({ factory: () => new CoalescingTransport(), dnsResolveFn: nodeResolveHost });
  return NatsConnectionImpl.connect(opts);
}
