/** The system mail templates: each renders a subject, text and HTML; callers' values are escaped in the HTML. */
import { newId, type SystemMail } from '@mailroom/contracts';
import { escapeHtml, renderSystemMail } from './templates';

const transfer = { transfer_id: newId('ownershipTransfer'), org_name: 'Acme <Labs>', owner: 'Ada', new_owner: 'Grace & co' };
const token = `mri_${'A'.repeat(43)}`;
const mails: SystemMail[] = [
  { id: newId('systemMail'), to: 'grace@example.com', template: 'ownership_transfer.requested', data: { ...transfer, recipient: 'new_owner', expires_at: '2026-12-02T10:00:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'ownership_transfer.requested', data: { ...transfer, recipient: 'owner', expires_at: '2026-12-02T10:00:00.000Z' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'ownership_transfer.accepted', data: { ...transfer, recipient: 'owner' } },
  { id: newId('systemMail'), to: 'grace@example.com', template: 'ownership_transfer.accepted', data: { ...transfer, recipient: 'new_owner' } },
  { id: newId('systemMail'), to: 'ada@example.com', template: 'ownership_transfer.cancelled', data: { ...transfer, recipient: 'owner' } },
  { id: newId('systemMail'), to: 'grace@example.com', template: 'ownership_transfer.cancelled', data: { ...transfer, recipient: 'new_owner' } },
  { id: newId('systemMail'), to: 'bob@example.com', template: 'invitation', data: { invitation_id: newId('invitation'), org_name: 'Acme', inviter: 'Ada', role: 'admin', token, expires_at: '2026-12-02T10:00:00.000Z' } },
];

describe('system mail templates', () => {
  it('renders every template as subject, text and HTML, and escapes what callers give in the HTML', () => {
    for (const m of mails) {
      const r = renderSystemMail(m);
      expect(r.subject.length).toBeGreaterThan(0);
      expect(r.text).toMatch(/Mailroom/);
      expect(r.html).toMatch(/^<!doctype html>/);
      if (m.template !== 'invitation') {
        expect(r.text).toContain('Acme <Labs>');
        expect(r.html).toContain('Acme &lt;Labs&gt;');
        expect(r.html).not.toContain('<Labs>');
      }
    }
  });

  it('tells each party what they can do', () => {
    const [toNewOwner, toOwner] = mails.map(renderSystemMail);
    expect(toNewOwner!.text).toContain(`/api/v1/org/transfer-ownership/${transfer.transfer_id}/accept`);
    expect(toNewOwner!.text).toContain('2026-12-02 10:00 UTC');
    expect(toOwner!.text).toContain(`/api/v1/org/transfer-ownership/${transfer.transfer_id}/cancel`);
    const invite = renderSystemMail(mails[6]!);
    expect(invite.subject).toBe('Ada invited you to Acme on Mailroom');
    expect(invite.text).toContain(token);
    expect(invite.text).toMatch(/as an admin/);
    expect(invite.html).toContain(`<code>${token}</code>`);
  });

  it('escapes the five HTML characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
