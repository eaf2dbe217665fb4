import { Command, CommanderError } from 'commander';
import { isCodecallError } from '../errors/index.ts';
import type { CliIo, ExecCommandOptions } from './exec-command.ts';
import { execCommand } from './exec-command.ts';
import type { TasksOptions } from './tasks-command.ts';
import { tasksCancel, tasksDecide, tasksList, tasksResume, tasksShow } from './tasks-command.ts';

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
    .description('show a task and its journal summary')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: TasksOptions) => {
      exitCode = await tasksShow(id, options, io);
    });
  tasks
    .command('resume')
    .description('resume a paused task and run it here, replaying its journal')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
    .option('--json', 'print one JSON object on the last line of stdout')
    .action(async (id: string, options: TasksOptions & { tools?: string }) => {
      exitCode = await tasksResume(id, options, io);
    });
  for (const decision of ['approve', 'reject'] as const) {
    tasks
      .command(decision)
      .description(`${decision} a pending approval (bound to that call) and run the task on here`)
      .argument('<id>', 'the task id')
      .argument('<approval_id>', 'the approval id (from `tasks show` or the paused output)')
      .requiredOption('--db <path>', 'the SQLite task database')
      .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
      .option('--reason <text>', 'why (journaled with the decision)')
      .option('--actor <name>', 'who decides (default: cli:<user>)')
      .option('--json', 'print one JSON object on the last line of stdout')
      .action(
        async (
          id: string,
          approvalId: string,
          options: TasksOptions & { tools?: string; reason?: string; actor?: string },
        ) => {
          exitCode = await tasksDecide(id, approvalId, decision, options, io);
        },
      );
  }
  tasks
    .command('cancel')
    .description('cancel a task that is not running')
    .argument('<id>', 'the task id')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: TasksOptions) => {
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
