/** The mailbox service's operations. Tenancy comes from the caller's credential, never from the request. */
import { AppError, isTenant, type AuthContext } from '@mailroom/contracts';
import type { RpcHandlers } from '@mailroom/messaging';
import type { Inboxes } from '../domain/inboxes';
import type { Messages } from '../domain/messages';
import type { Sending } from '../domain/sending';
import type { Tenant } from '../repo/inbox.repository';

function tenantOf(auth: AuthContext): Tenant {
  if (!isTenant(auth)) throw new AppError('unauthorized', 'this operation needs a user or API key credential');
  return { org_id: auth.org_id, env_id: auth.env_id };
}

export function mailboxHandlers(inboxes: Inboxes, messages: Messages, sending: Sending): RpcHandlers<'mailbox'> {
  return {
    'mailbox.inbox.create': (req, { auth }) => inboxes.create(tenantOf(auth), req),
    'mailbox.inbox.list': (req, { auth }) => inboxes.list(tenantOf(auth), req),
    'mailbox.inbox.get': (req, { auth }) => inboxes.get(tenantOf(auth), req.id),
    'mailbox.inbox.update': (req, { auth }) => inboxes.update(tenantOf(auth), req.id, req),
    'mailbox.inbox.delete': async (req, { auth }) => {
      await inboxes.delete(tenantOf(auth), req.id);
      return {};
    },
    'mailbox.inbox.resume': (req, { auth }) => inboxes.resume(tenantOf(auth), req.id),
    'mailbox.inbox.resolve': async (req, { auth }) => {
      if (auth.kind !== 'service') throw new AppError('forbidden', 'internal operation');
      return inboxes.resolve(req.address);
    },
    'mailbox.message.get': (req, { auth }) => messages.get(tenantOf(auth), req.inbox_id, req.message_id),
    'mailbox.message.list': (req, { auth }) => messages.list(tenantOf(auth), req),
    'mailbox.message.raw': (req, { auth }) => messages.raw(tenantOf(auth), req.inbox_id, req.message_id),
    'mailbox.attachment.get': (req, { auth }) => messages.attachment(tenantOf(auth), req.inbox_id, req.message_id, req.attachment_id),
    'mailbox.thread.list': (req, { auth }) => messages.threads(tenantOf(auth), req),
    'mailbox.thread.get': (req, { auth }) => messages.thread(tenantOf(auth), req.inbox_id, req.thread_id),
    'mailbox.label.addToMessage': (req, { auth }) => messages.labelMessage(tenantOf(auth), req.id, req.labels, 'add'),
    'mailbox.label.removeFromMessage': (req, { auth }) => messages.labelMessage(tenantOf(auth), req.id, req.labels, 'remove'),
    'mailbox.label.addToThread': (req, { auth }) => messages.labelThread(tenantOf(auth), req.id, req.labels, 'add'),
    'mailbox.label.removeFromThread': (req, { auth }) => messages.labelThread(tenantOf(auth), req.id, req.labels, 'remove'),
    'mailbox.label.batch': (req, { auth }) => messages.batch(tenantOf(auth), req),
    'mailbox.label.list': (req, { auth }) => messages.labelList(tenantOf(auth), req),
    'mailbox.message.reply': (req, { auth }) => sending.reply(tenantOf(auth), req.inbox_id, req.message_id, req),
    'mailbox.message.replyAll': (req, { auth }) => sending.replyAll(tenantOf(auth), req.inbox_id, req.message_id, req),
    'mailbox.message.forward': (req, { auth }) => sending.forward(tenantOf(auth), req.inbox_id, req.message_id, req),
    'mailbox.message.send': (req, { auth }) => sending.send(tenantOf(auth), req.inbox_id, req),
  };
}
