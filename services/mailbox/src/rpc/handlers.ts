/** The mailbox service's operations. Tenancy comes from the caller's credential, never from the request. */
import { AppError, requireService, tenantScope } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { Inboxes } from '../domain/inboxes';
import type { Messages } from '../domain/messages';
import type { Sending } from '../domain/sending';
import type { MailboxUsage } from '../domain/usage';
import type { MailboxExport } from '../domain/export';
import type { Uploads } from '../domain/uploads';

export function mailboxHandlers(inboxes: Inboxes, messages: Messages, sending: Sending, usage: MailboxUsage, exportRows: MailboxExport, uploads: Uploads): RpcHandlers<'mailbox'> {
  return {
    'mailbox.inbox.create': (req, { auth }) => inboxes.create(tenantScope(auth), req),
    'mailbox.inbox.list': (req, { auth }) => inboxes.list(tenantScope(auth), req),
    'mailbox.inbox.get': (req, { auth }) => inboxes.get(tenantScope(auth), req.id),
    'mailbox.inbox.update': (req, { auth }) => inboxes.update(tenantScope(auth), req.id, req),
    'mailbox.inbox.delete': async (req, { auth }) => {
      await inboxes.delete(tenantScope(auth), req.id);
      return {};
    },
    'mailbox.inbox.resume': (req, { auth }) => inboxes.resume(tenantScope(auth), req.id),
    'mailbox.inbox.countInEnvironment': async (req, { auth }) => {
      requireService(auth);
      return inboxes.count(req);
    },
    'mailbox.usage.count': async (req, { auth }) => {
      requireService(auth);
      return usage.count(req.org_id);
    },
    'mailbox.inbox.listOnDomain': async (req, { auth }) => {
      requireService(auth);
      return inboxes.onDomain(req, req.domain);
    },
    'mailbox.inbox.ofEnvironment': async (req, { auth }) => {
      requireService(auth);
      return inboxes.ofEnvironment(req, req.inbox_id);
    },
    'mailbox.inbox.resolve': async (req, { auth }) => {
      requireService(auth);
      return inboxes.resolve(req.address);
    },
    'mailbox.message.get': (req, { auth }) => messages.get(tenantScope(auth), req.inbox_id, req.message_id),
    'mailbox.message.list': (req, { auth }) => messages.list(tenantScope(auth), req),
    'mailbox.message.raw': (req, { auth }) => messages.raw(tenantScope(auth), req.inbox_id, req.message_id),
    'mailbox.attachment.get': (req, { auth }) => messages.attachment(tenantScope(auth), req.inbox_id, req.message_id, req.attachment_id),
    // A signed link's context names its tenant; the gateway made the request from the link itself.
    'mailbox.download.signed': (req, { auth }) => {
      if (auth.kind !== 'link') throw new AppError('unauthorized', 'this operation opens signed download links only');
      const t = { org_id: auth.org_id, env_id: auth.env_id };
      return req.attachment_id ? messages.attachment(t, req.inbox_id, req.message_id, req.attachment_id) : messages.raw(t, req.inbox_id, req.message_id);
    },
    'mailbox.thread.list': (req, { auth }) => messages.threads(tenantScope(auth), req),
    'mailbox.thread.get': (req, { auth }) => messages.thread(tenantScope(auth), req.inbox_id, req.thread_id),
    'mailbox.label.addToMessage': (req, { auth }) => messages.labelMessage(tenantScope(auth), req.id, req.labels, 'add'),
    'mailbox.label.removeFromMessage': (req, { auth }) => messages.labelMessage(tenantScope(auth), req.id, req.labels, 'remove'),
    'mailbox.label.addToThread': (req, { auth }) => messages.labelThread(tenantScope(auth), req.id, req.labels, 'add'),
    'mailbox.label.removeFromThread': (req, { auth }) => messages.labelThread(tenantScope(auth), req.id, req.labels, 'remove'),
    'mailbox.label.batch': (req, { auth }) => messages.batch(tenantScope(auth), req),
    'mailbox.label.list': (req, { auth }) => messages.labelList(tenantScope(auth), req),
    'mailbox.message.reply': (req, { auth, requestKey }) => sending.reply(tenantScope(auth), req.inbox_id, req.message_id, req, requestKey),
    'mailbox.message.replyAll': (req, { auth, requestKey }) => sending.replyAll(tenantScope(auth), req.inbox_id, req.message_id, req, requestKey),
    'mailbox.message.forward': (req, { auth, requestKey }) => sending.forward(tenantScope(auth), req.inbox_id, req.message_id, req, requestKey),
    'mailbox.message.send': (req, { auth, requestKey }) => sending.send(tenantScope(auth), req.inbox_id, req, requestKey),
    'mailbox.upload.register': (req, { auth }) => uploads.register(tenantScope(auth), req),
    // The organization's mail for its export (the admin service asks; services only).
    'mailbox.export.page': async (req, { auth }) => {
      requireService(auth);
      return exportRows.page(req);
    },
  };
}
