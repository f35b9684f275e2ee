/**
 * Finding the running instances of every service: each instance subscribes to the discovery
 * subject outside any queue group and answers a ping with who it is (contracts
 * instanceInfo); the monitor (admin) sends one ping and gathers the answers until they stop
 * coming. This is what NATS micro-services' `$SRV.PING`/`INFO` does, within the bus's
 * namespace and permissions (decisions.md, "Health: the discovery ping").
 */
import { DISCOVERY_SUBJECT, instanceInfo, type InstanceInfo } from '@mailroom/contracts';
import { errors as natsErrors, type Subscription } from '@nats-io/transport-node';
import type { Bus } from './bus';
import { decodeJson, encodeJson } from './codec';

export interface DiscoveryAnswerer {
  stop(): Promise<void>;
}

/** Answers the discovery ping for this instance until stopped. */
export function answerDiscovery(bus: Bus, info: InstanceInfo): DiscoveryAnswerer {
  const body = encodeJson(instanceInfo.parse(info));
  const sub: Subscription = bus.nc.subscribe(bus.ns.subject(DISCOVERY_SUBJECT), {
    callback: (err, msg) => {
      if (err || typeof msg.reply !== 'string' || !/^_INBOX[._]/.test(msg.reply)) return;
      msg.respond(body);
    },
  });
  return { stop: () => sub.drain().catch(() => sub.unsubscribe()) };
}

export interface DiscoverOptions {
  /** The longest the whole ping may take. */
  maxWaitMs?: number;
  /** Answers are taken as complete once none came for this long. */
  stallMs?: number;
}

function parseJson(data: Uint8Array): unknown {
  try {
    return decodeJson(data);
  } catch {
    return undefined;
  }
}

/** Every instance that answered one ping; answers that do not parse are left out. */
export async function discoverInstances(bus: Bus, opts: DiscoverOptions = {}): Promise<InstanceInfo[]> {
  const found: InstanceInfo[] = [];
  try {
    const replies = await bus.nc.requestMany(bus.ns.subject(DISCOVERY_SUBJECT), new Uint8Array(0), {
      strategy: 'stall',
      maxWait: opts.maxWaitMs ?? 2_000,
      stall: opts.stallMs ?? 300,
    });
    for await (const msg of replies) {
      const parsed = instanceInfo.safeParse(parseJson(msg.data));
      if (parsed.success) found.push(parsed.data);
    }
  } catch (err) {
    // Nobody answered at all: no instance is running.
    const none = err instanceof natsErrors.NoRespondersError || (err instanceof natsErrors.RequestError && err.isNoResponders());
    if (!none) throw err;
  }
  return found;
}
