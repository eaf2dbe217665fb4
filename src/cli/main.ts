import { Command, CommanderError } from 'commander';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { CliIo, ExecCommandOptions } from './exec-command.ts';
import { execCommand } from './exec-command.ts';
import { DEFAULT_DB, serveCommand } from './serve-command.ts';
import type { ServeOptions } from './serve-command.ts';
import type { RunOnOptions, TasksOptions } from './tasks-command.ts';
import {
  tasksCancel,
  tasksDecide,
  tasksInput,
  tasksList,
  tasksPause,
  tasksResolve,
  tasksResume,
  tasksShow,
} from './tasks-command.ts';

export const EXIT_USAGE = 2;

/** Parses argv and runs the command; resolves the process exit code. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  let exitCode = 0;
  const program = new Command('codecall')
    .description('Durable, code-based tool calling: run programs that call tools inside a sandbox.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  program
    .command('exec')
    .description('run a .js/.ts program in the quickjs sandbox')
    .argument('<file>', 'the program')
    .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
    .option('--timeout <seconds>', 'wall-clock limit')
    .option('--memory <mb>', 'memory limit in MiB')
    .option('--seed <n>', 'seed for Math.random')
    .option('--json', 'print one JSON object on the last line of stdout')
    .option('--db <path>', 'run as a durable task stored in this SQLite file (SIGINT pauses it)')
    .action(async (file: string, options: ExecCommandOptions) => {
      exitCode = await execCommand(file, options, io);
    });
  program
    .command('serve')
    .description('serve the task API (embedded defaults: an SQLite file under ./data, the quickjs sandbox)')
    // No commander defaults: a flag given wins over CODECALL_* and the config file, an absent one does not.
    .option('--config <file>', 'a JSON config file (also CODECALL_CONFIG)')
    .option('--port <n>', 'TCP port, 0 for any free one (default 8080)')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .option('--db <path>', `the SQLite task database (default ${DEFAULT_DB})`)
    .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
    .option('--concurrency <n>', 'tasks run at once (default 4)')
    .option('--tenant-concurrency <n>', 'tasks of one tenant run at once (default: no cap)')
    .option('--webhook-secret <whsec>', 'signs webhooks (Standard Webhooks); needed for callback_url')
    .option('--allow-private-webhooks', 'allow webhooks to loopback, private and link-local addresses')
    .option('--insecure-no-auth', 'no API keys: every caller is admin (local use only)')
    .action(async (options: ServeOptions) => {
      exitCode = await serveCommand(options, io);
    });
  const tasks = program.command('tasks').description('inspect and control durable tasks in a SQLite file');
  tasks
    .command('list')
    .description('list tasks, oldest first')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--status <status>', 'only tasks with this status')
    .option('--json', 'print one JSON object')
    .action(async (options: TasksOptions & { status?: string }) => {
      exitCode = await tasksList(options, io);
    });
  tasks
    .command('show')
    .description('show a task (the task view); --journal lists its journal entries too')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--journal', 'also list the journal entries (verified against their checksums)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: TasksOptions & { journal?: boolean }) => {
      exitCode = await tasksShow(id, options, io);
    });
  tasks
    .command('resume')
    .description('resume a paused task (or run a pending one) here, replaying its journal')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
    .option('--force', 'accept tools or an engine that changed since the task was journaled')
    .option('--actor <name>', 'who resumes (default: cli:<user>)')
    .option('--json', 'print the task view as JSON on the last line of stdout')
    .action(
      async (id: string, options: TasksOptions & { tools?: string; force?: boolean; actor?: string }) => {
        exitCode = await tasksResume(id, options, io);
      },
    );
  tasks
    .command('pause')
    .description('pause a task: a queued one at once, a running one (in any process) at its next poll')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--actor <name>', 'who pauses (default: cli:<user>)')
    .option('--json', 'print the task view as JSON')
    .action(async (id: string, options: TasksOptions & { actor?: string }) => {
      exitCode = await tasksPause(id, options, io);
    });
  const runOn = (cmd: Command): Command =>
    cmd
      .requiredOption('--db <path>', 'the SQLite task database')
      .option('--resume', 'run the task on here afterwards')
      .option('--tools <module>', 'the tools module (with --resume)')
      .option('--reason <text>', 'why (journaled with the decision)')
      .option('--actor <name>', 'who decides (default: cli:<user>)')
      .option('--json', 'print the task view as JSON on the last line of stdout');
  for (const decision of ['approve', 'reject'] as const) {
    runOn(
      tasks
        .command(decision)
        .description(`${decision} a pending approval (bound to that exact call); --resume runs the task on`)
        .argument('<id>', 'the task id')
        .argument('<approval_id>', 'the approval id (from `tasks show` or the paused output)'),
    ).action(async (id: string, approvalId: string, options: RunOnOptions) => {
      if (decision === 'reject' && options.reason === undefined) {
        throw new CodecallError('INVALID_ARGUMENT', 'reject needs --reason (the program sees it)');
      }
      exitCode = await tasksDecide(id, approvalId, decision, options, io);
    });
  }
  runOn(
    tasks
      .command('input')
      .description('answer the input.wait(name) a task waits on with a JSON value; --resume runs it on')
      .argument('<id>', 'the task id')
      .argument('<name>', 'the name the program waits on')
      .argument('<json>', 'the value, as JSON'),
  ).action(async (id: string, name: string, json: string, options: RunOnOptions) => {
    exitCode = await tasksInput(id, name, json, options, io);
  });
  runOn(
    tasks
      .command('resolve')
      .description('decide on a task that needs attention: retry the call, skip it with --result, or fail')
      .argument('<id>', 'the task id')
      .argument('<action>', 'retry | skip | fail')
      .option('--result <json>', 'with skip: the outcome the program sees for the call'),
  ).action(async (id: string, action: string, options: RunOnOptions & { result?: string }) => {
    exitCode = await tasksResolve(id, action, options, io);
  });
  tasks
    .command('cancel')
    .description('cancel a task that has not ended (a running one in any process too)')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--reason <text>', 'why (journaled)')
    .option('--actor <name>', 'who cancels (default: cli:<user>)')
    .option('--json', 'print the task view as JSON')
    .action(async (id: string, options: TasksOptions & { actor?: string; reason?: string }) => {
      exitCode = await tasksCancel(id, options, io);
    });
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : EXIT_USAGE;
    if (isCodecallError(e)) {
      io.stderr(`error ${e.code}: ${e.message}\n`);
      return EXIT_USAGE;
    }
    throw e;
  }
  return exitCode;
}

const defaultIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};
