/**
 * An address given up by one tenant and taken by another while the SMTP edge still has the
 * first one's inbox in its recipient cache (RCPT_CACHE_TTL_MS, 60 s here so that the window
 * is certain): mail that arrives then is the new owner's, and nothing of it reaches the old
 * one. Real SMTP into the edge, the API and the event stream, as in receive.int.spec.
 */
import nodemailer from 'nodemailer';
import { waitFor, type ApiClient } from '@mailroom/testing';
import { usePlatform } from './fixtures';

const mailroom = usePlatform({
  env: { MAIL_DOMAIN: 'agents.test', SMTP_HOSTNAME: 'mx.agents.test', RCPT_CACHE_TTL_MS: '60000' },
  dns: [
    { name: 'sender.test', type: 'TXT', text: 'v=spf1 ip4:127.0.0.1 -all' },
    { name: '_dmarc.sender.test', type: 'TXT', text: 'v=DMARC1; p=none' },
  ],
  tenant: false,
  events: true,
});
const { events: tap } = mailroom;

function send(to: string, subject: string) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailroom.smtpPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
  return transport.sendMail({ from: 'Ada <ada@sender.test>', to, subject, text: `${subject}: hello` });
}

async function subjectsIn(api: ApiClient, inboxId: string, min: number): Promise<string[]> {
  return waitFor(
    async () => {
      const res = await api.get(`/api/v1/inboxes/${inboxId}/messages`);
      return res.status === 200 && res.body.data.length >= min && res.body.data.map((m: { subject: string }) => m.subject);
    },
    { timeoutMs: 20_000, what: `${min} message(s) in ${inboxId}` },
  );
}

it("gives mail accepted for a deleted inbox to the inbox another tenant made with its address since, and tells only that tenant", async () => {
  const a = await mailroom.signUp('first@example.com');
  const b = await mailroom.signUp('second@example.com');
  const old = (await a.api.post('/api/v1/inboxes', { username: 'reuse' })).body;
  // The edge looks the address up and keeps the answer (60 s).
  await send(old.address, 'For A');
  expect(await subjectsIn(a.api, old.inbox_id, 1)).toEqual(['For A']);

  expect((await a.api.delete(`/api/v1/inboxes/${old.inbox_id}`)).status).toBe(204);
  const taken = await b.api.post('/api/v1/inboxes', { username: 'reuse' });
  expect(taken.status).toBe(201);
  expect(taken.body.address).toBe(old.address);

  // Accepted from the cache for A's deleted inbox: stored in B's, announced to B.
  await send(old.address, 'For B');
  expect(await subjectsIn(b.api, taken.body.inbox_id, 1)).toEqual(['For B']);
  const event = await tap.waitFor((e) => e.type === 'message.received' && e.data.subject === 'For B');
  expect(event).toMatchObject({ org_id: b.org_id, data: { inbox_id: taken.body.inbox_id, to_addresses: [old.address] } });
  expect(tap.events.filter((e) => e.type === 'message.received' && e.data.subject === 'For B')).toHaveLength(1);
  const toA = tap.events.filter((e) => e.org_id === a.org_id).flatMap((e) => (e.type === 'message.received' ? [e.data.subject] : []));
  expect(toA).toEqual(['For A']);
});

it('keeps mail accepted for a deleted inbox whose address nobody has taken with that inbox, as before', async () => {
  const a = await mailroom.signUp('third@example.com');
  const old = (await a.api.post('/api/v1/inboxes', { username: 'gone' })).body;
  await send(old.address, 'Before');
  await subjectsIn(a.api, old.inbox_id, 1);
  expect((await a.api.delete(`/api/v1/inboxes/${old.inbox_id}`)).status).toBe(204);

  await send(old.address, 'After');
  const event = await tap.waitFor((e) => e.type === 'message.received' && e.data.subject === 'After');
  expect(event).toMatchObject({ org_id: a.org_id, data: { inbox_id: old.inbox_id } });
});
