import { createHmac } from 'node:crypto';
import { AppError, newId } from '@mailroom/contracts';
import { DEVELOPMENT_ENCRYPTION_KEY, ManualClock } from '@mailroom/platform';
import { DOWNLOAD_PATH, DownloadLinks, downloadLinkKey, withDownloadLinks, type LinkTarget } from './download-links';

const key = downloadLinkKey(DEVELOPMENT_ENCRYPTION_KEY);
const target: LinkTarget = {
  org_id: newId('organization'),
  env_id: newId('environment'),
  inbox_id: newId('inbox'),
  message_id: newId('message'),
  attachment_id: newId('attachment'),
};

function setUp(ttlSeconds = 3600) {
  const clock = new ManualClock(new Date('2026-12-10T09:00:00.000Z'));
  return { clock, links: new DownloadLinks(key, ttlSeconds, clock) };
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return `${err.status} ${err.code}: ${err.message}`;
    throw err;
  }
  return 'accepted';
}

describe('signed download links', () => {
  it('opens what it was signed for, the raw message as well as an attachment', () => {
    const { links } = setUp();
    expect(links.verify(links.sign(target).token)).toEqual(target);
    const raw = { ...target, attachment_id: null };
    expect(links.verify(links.sign(raw).token)).toEqual(raw);
  });

  it('expires after the configured lifetime, on the injected clock, and says so', () => {
    const { links, clock } = setUp(600);
    const { token, expires_at } = links.sign(target);
    expect(expires_at.toISOString()).toBe('2026-12-10T09:10:00.000Z');
    clock.advance(600_000 - 1);
    expect(links.verify(token)).toEqual(target);
    clock.advance(1);
    expect(refusal(() => links.verify(token))).toBe('403 link_expired: the download link expired at 2026-12-10T09:10:00.000Z; read the message again for a fresh one');
  });

  it('refuses any altered part: tenant, object, expiry or signature', () => {
    const { links } = setUp();
    const parts = links.sign(target).token.split('.');
    const other = [newId('organization'), newId('environment'), newId('inbox'), newId('message'), 'raw'];
    for (let i = 1; i <= 5; i++) {
      const altered = [...parts];
      altered[i] = other[i - 1]!;
      expect(refusal(() => links.verify(altered.join('.')))).toMatch(/^403 invalid_link: the download link is not valid/);
    }
    const later = [...parts];
    later[6] = String(Number(parts[6]) + 86_400);
    expect(refusal(() => links.verify(later.join('.')))).toMatch(/^403 invalid_link: the download link is not valid/);
    const flipped = [...parts];
    flipped[7] = (flipped[7]![0] === 'A' ? 'B' : 'A') + flipped[7]!.slice(1);
    expect(refusal(() => links.verify(flipped.join('.')))).toMatch(/^403 invalid_link: the download link is not valid/);
  });

  it('refuses a link signed with another key, and anything that is not a link', () => {
    const { links, clock } = setUp();
    const stranger = new DownloadLinks(downloadLinkKey(Buffer.alloc(32, 7).toString('base64')), 3600, clock);
    expect(refusal(() => links.verify(stranger.sign(target).token))).toMatch(/^403 invalid_link: the download link is not valid/);
    const token = links.sign(target).token;
    for (const bad of ['', 'x', token.slice(0, -1), `${token}.x`, token.replace('v1.', 'v2.'), token.replace(/\.\d+\./, '.0123.'), token.replaceAll('.', '..')]) {
      expect(refusal(() => links.verify(bad))).toMatch(/^403 invalid_link: the download link is not valid/);
    }
  });

  it('signs the parts, in order, with HMAC-SHA256 under a key of its own (not the secrets key itself)', () => {
    const { links } = setUp();
    const parts = links.sign(target).token.split('.');
    const data = `mailroom-download\n${parts.slice(0, 7).join('\n')}`;
    expect(parts[7]).toBe(createHmac('sha256', key).update(data).digest('base64url'));
    expect(parts[7]).not.toBe(createHmac('sha256', Buffer.from(DEVELOPMENT_ENCRYPTION_KEY, 'base64')).update(data).digest('base64url'));
  });
});

describe('a message with its links', () => {
  it('links the raw message and each attachment, all expiring together, and each link opens its own object', () => {
    const { links } = setUp();
    const tenant = { org_id: target.org_id, env_id: target.env_id };
    const [a1, a2] = [newId('attachment'), newId('attachment')];
    const m = { inbox_id: target.inbox_id, message_id: target.message_id, subject: 'x', attachments: [{ attachment_id: a1, size: 1 }, { attachment_id: a2, size: 2 }] };
    const linked = withDownloadLinks(m, tenant, links, 'https://api.example.com');
    expect(linked).toMatchObject({ subject: 'x', download_urls_expire_at: '2026-12-10T10:00:00.000Z', attachments: [{ attachment_id: a1, size: 1 }, { attachment_id: a2, size: 2 }] });
    const tokenOf = (url: string) => {
      expect(url.startsWith(`https://api.example.com${DOWNLOAD_PATH}`)).toBe(true);
      return url.slice(`https://api.example.com${DOWNLOAD_PATH}`.length);
    };
    const base = { ...tenant, inbox_id: m.inbox_id, message_id: m.message_id };
    expect(links.verify(tokenOf(linked.raw_download_url))).toEqual({ ...base, attachment_id: null });
    expect(linked.attachments.map((a) => links.verify(tokenOf(a.download_url)))).toEqual([
      { ...base, attachment_id: a1 },
      { ...base, attachment_id: a2 },
    ]);
  });
});
