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
});
