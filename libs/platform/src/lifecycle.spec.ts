import { createLogger } from './logger';
import { Lifecycle } from './lifecycle';

const log = createLogger({ service: 'test', level: 'silent' });

describe('Lifecycle', () => {
  it('stops in reverse order, once', async () => {
    const order: string[] = [];
    const life = new Lifecycle(log);
    life.add('db', 'db', () => order.push('db'));
    life.add('bus', 'bus', async () => order.push('bus'));
    life.add('http', 'http', () => order.push('http'));
    const [a, b] = await Promise.all([life.stop(), life.stop()]);
    expect(order).toEqual(['http', 'bus', 'db']);
    expect(a && b).toBe(true);
  });

  it('moves on past a stop that hangs or fails, and reports it', async () => {
    const order: string[] = [];
    const life = new Lifecycle(log, { stepTimeoutMs: 20 });
    life.add('db', 'db', () => order.push('db'));
    life.add('hangs', 'x', () => new Promise(() => {}));
    life.add('fails', 'y', () => {
      throw new Error('boom');
    });
    expect(await life.stop()).toBe(false);
    expect(order).toEqual(['db']);
  });

  it('on a signal during start-up, stops once start-up has settled, what it registered after the signal too', async () => {
    const order: string[] = [];
    const life = new Lifecycle(log);
    let settle!: () => void;
    const before = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
    const exited = new Promise<number>((resolve) => life.trapSignals(resolve, new Promise<void>((r) => (settle = r))));
    try {
      life.add('db', 'db', () => order.push('db'));
      process.emit('SIGTERM', 'SIGTERM');
      life.add('dispatcher', 'd', () => order.push('dispatcher'));
      // Nothing stops before start-up is over.
      await new Promise((r) => setImmediate(r));
      expect(order).toEqual([]);
      settle();
      expect(await exited).toBe(0);
      expect(order).toEqual(['dispatcher', 'db']);
    } finally {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) for (const l of process.listeners(signal)) if (!before[signal].includes(l)) process.off(signal, l);
    }
  });
});
