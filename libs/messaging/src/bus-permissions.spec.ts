import { BUS_IDENTITIES, SERVICE_ONLY_OPERATIONS } from '@mailroom/contracts';
import { busPermissions, inboxPrefix, serverStreams } from './bus-permissions';
import { Namespace } from './namespace';

const ns = new Namespace('t1');

describe('bus permissions from the access table', () => {
  it('lets a service serve its own operations and answer them, and read only its own inbox', () => {
    const p = busPermissions('mailbox', ns);
    expect(p.sub.allow).toContain('t1.rpc.mailbox.inbox.resolve');
    expect(p.sub.allow).toContain(`${inboxPrefix('mailbox', ns)}.>`);
    expect(p.sub.allow).not.toContain('t1.rpc.auth.apikey.create');
    expect(p.sub.allow.some((s) => s.includes('gateway'))).toBe(false);
    expect(p.resp).toEqual({ max: 1, ttl: 10_000_000_000 });
    expect(busPermissions('migrate', ns).resp).toBeUndefined();
  });

  it('lets every service answer the discovery ping, and only the monitoring identity (admin) send it and read stream and consumer info', () => {
    for (const identity of ['gateway', 'mailbox', 'admin'] as const) {
      expect(busPermissions(identity, ns).sub.allow).toContain('t1.discovery.ping');
      expect(busPermissions(identity, ns).resp).toBeDefined();
    }
    expect(busPermissions('migrate', ns).sub.allow).not.toContain('t1.discovery.ping');
    const admin = busPermissions('admin', ns).pub.allow;
    expect(admin).toContain('t1.discovery.ping');
    expect(admin).toContain('$JS.API.STREAM.INFO.t1_EVENTS');
    expect(admin).toContain('$JS.API.CONSUMER.INFO.t1_EVENTS.t1_webhooks--dispatch');
    expect(busPermissions('gateway', ns).pub.allow).not.toContain('t1.discovery.ping');
  });

  it('lets a service call only what the table names, and never a service-only operation from the gateway', () => {
    const webhooks = busPermissions('webhooks', ns).pub.allow;
    // What webhooks calls: an endpoint's inboxes (are they the environment's), its organization's plan limits, and whether orgs still knows an environment whose deletion it read.
    expect(webhooks.filter((s) => s.startsWith('t1.rpc.')).sort()).toEqual(['t1.rpc.mailbox.inbox.ofEnvironment', 't1.rpc.orgs.environment.get', 't1.rpc.orgs.organization.limits']);
    const gateway = busPermissions('gateway', ns).pub.allow;
    expect(gateway).toContain('t1.rpc.auth.apikey.create');
    for (const op of SERVICE_ONLY_OPERATIONS) expect(gateway).not.toContain(`t1.rpc.${op}`);
    expect(busPermissions('mail-ingest', ns).pub.allow).toContain('t1.rpc.mailbox.inbox.resolve');
  });

  it('lets one publisher publish each stored subject', () => {
    expect(busPermissions('mail-ingest', ns).pub.allow).toContain('t1.mail.inbound');
    expect(busPermissions('auth', ns).pub.allow).toContain('t1.internal.auth.session.revoked');
    for (const other of BUS_IDENTITIES.filter((i) => i !== 'mail-ingest')) expect(busPermissions(other, ns).pub.allow).not.toContain('t1.mail.inbound');
    for (const other of BUS_IDENTITIES.filter((i) => i !== 'auth')) expect(busPermissions(other, ns).pub.allow).not.toContain('t1.internal.auth.session.revoked');
  });

  it('grants a durable consumer to its owner only, by name', () => {
    const mailSend = busPermissions('mail-send', ns).pub.allow;
    expect(mailSend).toContain('$JS.API.CONSUMER.MSG.NEXT.t1_MAIL_OUTBOUND.t1_mail-send--outbound');
    expect(mailSend).toContain('$JS.ACK.t1_MAIL_OUTBOUND.t1_mail-send--outbound.>');
    expect(mailSend.some((s) => s.includes('t1_MAIL_INBOUND'))).toBe(false);
    expect(busPermissions('webhooks', ns).pub.allow.some((s) => s.includes('MAIL_OUTBOUND'))).toBe(false);
  });

  it('lets readers of a bucket read and writers also write and purge it', () => {
    const gateway = busPermissions('gateway', ns).pub.allow;
    expect(gateway).toContain('$JS.API.DIRECT.GET.OBJ_t1_MAIL_RAW.>');
    expect(gateway).not.toContain('$O.t1_MAIL_RAW.>');
    const ingest = busPermissions('mail-ingest', ns).pub.allow;
    expect(ingest).toContain('$O.t1_MAIL_RAW.>');
    expect(ingest).toContain('$JS.API.STREAM.PURGE.OBJ_t1_MAIL_RAW');
    expect(busPermissions('webhooks', ns).pub.allow.some((s) => s.includes('MAIL_RAW'))).toBe(false);
    // What mail-send sends goes to a bucket of its own; what was received it only reads.
    const mailSend = busPermissions('mail-send', ns).pub.allow;
    expect(mailSend).toContain('$O.t1_MAIL_SENT.>');
    expect(mailSend).not.toContain('$O.t1_MAIL_RAW.>');
    expect(mailSend).not.toContain('$JS.API.STREAM.PURGE.OBJ_t1_MAIL_RAW');
    // Only mail-ingest writes MAIL_RAW: mailbox keeps the raws that came inside their work item in its own.
    for (const identity of BUS_IDENTITIES.filter((i) => i !== 'mail-ingest')) expect(busPermissions(identity, ns).pub.allow).not.toContain('$O.t1_MAIL_RAW.>');
    expect(busPermissions('mailbox', ns).pub.allow).toContain('$O.t1_MAIL_RECEIVED.>');
  });

  it('lets only migrate create and update streams, and nobody delete one', () => {
    for (const identity of BUS_IDENTITIES) {
      const p = busPermissions(identity, ns);
      expect(p.pub.allow.some((s) => s.includes('.STREAM.DELETE.'))).toBe(false);
      expect(p.pub.deny).toContain('$JS.API.STREAM.DELETE.>');
      const creates = p.pub.allow.filter((s) => s.includes('.STREAM.CREATE.') || s.includes('.STREAM.UPDATE.'));
      if (identity === 'migrate') expect(creates).toHaveLength(2 * serverStreams(ns).length);
      else expect(creates).toEqual([]);
    }
  });

  it('allows every subject by name: no wildcard spans a namespace', () => {
    for (const identity of BUS_IDENTITIES) {
      const { pub, sub } = busPermissions(identity, ns);
      for (const s of [...pub.allow, ...sub.allow]) expect(s.startsWith('>') || s.startsWith('*')).toBe(false);
      for (const s of [...pub.allow, ...sub.allow]) if (!s.startsWith('$JS.API.INFO')) expect(s).toMatch(/t1/);
    }
  });
});

describe('durable consumers', () => {
  it('may not be deleted by anyone, nor made or changed by another identity', () => {
    const webhooks = busPermissions('webhooks', ns).pub.deny;
    expect(webhooks).toContain('$JS.API.CONSUMER.DELETE.t1_EVENTS.t1_webhooks--dispatch');
    expect(webhooks).not.toContain('$JS.API.CONSUMER.CREATE.t1_EVENTS.t1_webhooks--dispatch');
    const gateway = busPermissions('gateway', ns).pub.deny;
    expect(gateway).toContain('$JS.API.CONSUMER.CREATE.t1_MAIL_OUTBOUND.t1_mail-send--outbound');
    expect(gateway).toContain('$JS.API.CONSUMER.DELETE.t1_MAIL_OUTBOUND.t1_mail-send--outbound');
  });

  it('are never made through the API form that names them in the body', () => {
    for (const identity of BUS_IDENTITIES) expect(busPermissions(identity, ns).pub.allow.filter((s) => /^\$JS\.API\.CONSUMER\.CREATE\.[^.]+$/.test(s))).toEqual([]);
  });
});
