import { randomBytes } from 'node:crypto';
import { newId } from '@mailroom/contracts';
import { Verp } from './verp';

const verp = new Verp(randomBytes(32).toString('base64'), 'bounces.mailroom.test');

describe('VERP return paths', () => {
  it('names the message on the platform bounce domain, or on a custom domain\'s bounce name', () => {
    const id = newId('message');
    expect(verp.address(id)).toMatch(new RegExp(`^bounces\\+${id}-[0-9a-z]{10}@bounces\\.mailroom\\.test$`));
    expect(verp.address(id, 'bounces.example.com')).toMatch(new RegExp(`^bounces\\+${id}-[0-9a-z]{10}@bounces\\.example\\.com$`));
    expect(verp.address(id, 'bounces.example.com').split('@')[0]).toBe(verp.address(id).split('@')[0]);
  });

  it('reads reports back from either, the MAC deciding', () => {
    const id = newId('message');
    expect(verp.messageOf(verp.address(id))).toBe(id);
    expect(verp.messageOf(verp.address(id, 'bounces.example.com'))).toBe(id);
    expect(verp.messageOf(verp.address(id, 'bounces.example.com').toUpperCase().replace('MSG_', 'msg_'))).toBe(id);
    const local = verp.address(id).split('@')[0]!;
    // A wrong MAC, another key's MAC, a name that is not a bounce name, a bare "bounces." are not ours.
    expect(verp.messageOf(`${local.slice(0, -1)}${local.endsWith('0') ? '1' : '0'}@bounces.example.com`)).toBeNull();
    expect(verp.messageOf(new Verp(randomBytes(32).toString('base64'), 'bounces.mailroom.test').address(id, 'bounces.example.com'))).toBeNull();
    expect(verp.messageOf(`${local}@example.com`)).toBeNull();
    expect(verp.messageOf(`${local}@mail.example.com`)).toBeNull();
    expect(verp.messageOf(`${local}@bounces.`)).toBeNull();
  });
});
