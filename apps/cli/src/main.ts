#!/usr/bin/env node
/** `mailroom`: the API from a shell, through @mailroom/sdk. Exit codes by error class (domain/exit-codes.ts). */
import { MailroomError } from '@mailroom/sdk';
import { Command, CommanderError } from 'commander';
import { completionCommand } from './completion';
import { inboxesCommand, keysCommand, messagesCommand, replyCommand, sendCommand, threadsCommand, webhooksCommand } from './commands';
import { EXIT, exitCodeForStatus } from './domain/exit-codes';
import { loginCommand, tailCommand, webhookListenCommand } from './session';

export function buildProgram(): Command {
  const program = new Command('mailroom')
    .description('Mailroom from the command line: inboxes, mail, webhooks and keys. MAILROOM_API_KEY and MAILROOM_BASE_URL override what `mailroom login` stored.')
    .option('--json', 'machine output: one JSON document (lists as arrays)')
    .showHelpAfterError()
    .exitOverride();
  for (const cmd of [loginCommand(), inboxesCommand(), messagesCommand(), threadsCommand(), sendCommand(), replyCommand(), webhooksCommand(), keysCommand(), tailCommand(), webhookListenCommand()]) {
    program.addCommand(cmd);
  }
  program.addCommand(completionCommand(program));
  // Every command and subcommand stops at a usage error instead of exiting on its own.
  const override = (cmd: Command): void => cmd.commands.forEach((c) => (c.exitOverride(), override(c)));
  override(program);
  return program;
}

function fail(json: boolean, code: number, error: { code: string; message: string; request_id?: string | undefined; details?: unknown }): void {
  if (json) process.stdout.write(`${JSON.stringify({ error })}\n`);
  else process.stderr.write(`error: ${error.message} (${error.code}${error.request_id ? `, request ${error.request_id}` : ''})\n`);
  process.exitCode = code;
}

async function main(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed the usage error (or the help/version, exit 0).
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else if (error instanceof MailroomError) {
      fail(json, exitCodeForStatus(error.status), { code: error.code, message: error.message, request_id: error.requestId, details: error.details });
    } else {
      fail(json, EXIT.usage, { code: 'cli_error', message: error instanceof Error ? error.message : String(error) });
    }
  }
}

if (require.main === module) void main(process.argv);
