import { Option } from 'commander';
import type { Command } from 'commander';
import { CodecallError } from '../errors/index.ts';
import type { CliIo } from './cli-io.ts';
import type { RemoteOptions, SubmitOptions } from './remote-tasks-command.ts';
import type { RunOnOptions, TasksOptions } from './tasks-command.ts';
import { resolveAction } from './resolve-action.ts';
import { addBudgetOptions } from './budget-options.ts';

// The commands' modules load when one runs (they pull in the store, the runtime or the client).
const remote = () => import('./remote-tasks-command.ts');
const local = () => import('./tasks-command.ts');

/** Runs a command's body and keeps its exit code. */
export type RunCommand = (body: () => Promise<number>) => Promise<void>;

type Target = { readonly local: TasksOptions } | { readonly remote: RemoteOptions };

interface WhereOptions {
  db?: string;
  url?: string;
  key?: string;
  json?: boolean;
  [flag: string]: unknown;
}

/**
 * --db for a local SQLite file, or --url (CODECALL_URL) and --key (CODECALL_KEY) for a service. Commander reads
 * these two variables itself (Option.env), from process.env.
 */
function where(cmd: Command, only?: 'remote'): Command {
  if (only !== 'remote') cmd.option('--db <path>', 'the SQLite task database (local)');
  return cmd
    .addOption(new Option('--url <url>', 'a codecall service: go over HTTP').env('CODECALL_URL'))
    .addOption(
      new Option('--key <key>', 'the API key for --url (a flag is visible in `ps`: prefer CODECALL_KEY)').env(
        'CODECALL_KEY',
      ),
    );
}

/**
 * Local or HTTP. An explicit --db beats a CODECALL_URL from the environment; --db and --url together are a
 * usage error, as are flags that only mean something locally (`localFlags`) with --url.
 */
function targetOf(cmd: Command, localFlags: readonly string[] = []): Target {
  const o = cmd.opts<WhereOptions>();
  const urlGiven = cmd.getOptionValueSource('url') === 'cli';
  if (o.db !== undefined) {
    if (urlGiven)
      throw new CodecallError('INVALID_ARGUMENT', 'give --db (local) or --url (a service), not both');
    if (cmd.getOptionValueSource('key') === 'cli') {
      throw new CodecallError('INVALID_ARGUMENT', '--key goes with --url');
    }
    return { local: { db: o.db, ...(o.json === undefined ? {} : { json: o.json }) } };
  }
  if (o.url === undefined) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'give --db PATH (a local task database) or --url URL (a codecall service; or set CODECALL_URL)',
    );
  }
  for (const flag of localFlags) {
    const name = flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    if (o[name] !== undefined) throw new CodecallError('INVALID_ARGUMENT', `--${flag} works with --db only`);
  }
  return { remote: { url: o.url, key: o.key, ...(o.json === undefined ? {} : { json: o.json }) } };
}

function remoteOf(cmd: Command): RemoteOptions {
  const target = targetOf(cmd);
  if ('local' in target) throw new CodecallError('INVALID_ARGUMENT', 'this verb needs --url');
  return target.remote;
}

/** `codecall tasks ...`: each verb on a local --db file or, with --url, on a service. */
export function registerTasksCommands(
  program: Command,
  context: { io: CliIo; run: RunCommand; env: Readonly<Record<string, string | undefined>> },
): void {
  const { io, run, env } = context;
  const tasks = program
    .command('tasks')
    .description('inspect and control durable tasks: in a SQLite file (--db) or on a service (--url)');

  where(
    addBudgetOptions(
      tasks
        .command('submit')
        .description('submit a .js/.ts/.py program, or an --instruction for a model, as a task to a service')
        .argument('[file]', 'the program (or use --instruction)')
        .option('--instruction <text>', 'what a model is to do (agent mode, instead of a program)')
        .option('--mode <mode>', 'agent mode: code (default) or function_calling')
        .option('--max-steps <n>', 'agent mode: model round trips before giving up')
        .option(
          '--file <path>',
          'an input file in the working directory (repeatable)',
          (v: string, p: string[]) => [...p, v],
          [],
        )
        .option('--language <language>', 'javascript | typescript | python (default: from the file name)')
        .option('--tools <names>', 'only these tools, comma-separated')
        .option('--timeout <seconds>', 'wall-clock limit')
        .option('--cpu <seconds>', 'CPU time limit (waiting for tools is not counted)')
        .option('--memory <mb>', 'memory limit in MiB')
        .option('--session <id>', 'the session the task belongs to')
        .option('--callback-url <url>', 'webhook for its status changes')
        .option('--max-retries <n>', 'retries after a failed attempt')
        .option('--priority <n>', 'higher runs first')
        .option('--metadata <json>', 'a JSON object kept with the task')
        .option('--idempotency-key <key>', 'a repeat with the same key returns the first task')
        .option('--wait', 'follow the task to its end (exit 1 unless it succeeds)')
        .option('--json', 'print the JSON body (with --wait: the final task view)'),
    ),
    'remote',
  ).action((file: string | undefined, options: SubmitOptions, cmd: Command) =>
    run(async () => (await remote()).remoteSubmit(file, { ...options, ...remoteOf(cmd) }, io)),
  );

  where(
    tasks
      .command('revise')
      .description(
        'fix and continue: a new task runs FILE in place of an ended code task, taking over the calls it completed',
      )
      .argument('<id>', 'the ended task to revise')
      .argument('<file>', 'the fixed program')
      .option('--rerun-reads', 'run read/idempotent calls again instead of taking them over')
      .option(
        '--tools <module>',
        "the tools module, remembered for the revision (with --db: it runs here; default: the revised task's)",
      )
      .option('--actor <name>', 'who revises (with --db; default: cli:<user>)')
      .option('--idempotency-key <key>', 'a repeat with the same key returns the first revision (with --url)')
      .option('--json', 'print the task view as JSON on the last line of stdout'),
  ).action(
    (
      id: string,
      file: string,
      options: { rerunReads?: boolean; tools?: string; actor?: string; idempotencyKey?: string },
      cmd: Command,
    ) =>
      run(async () => {
        const t = targetOf(cmd, ['tools', 'actor']);
        if ('remote' in t) return (await remote()).remoteRevise(id, file, { ...options, ...t.remote }, io);
        if (options.idempotencyKey !== undefined) {
          throw new CodecallError('INVALID_ARGUMENT', '--idempotency-key works with --url only');
        }
        return (await local()).tasksRevise(id, file, { ...options, ...t.local }, io);
      }),
  );

  where(
    tasks
      .command('list')
      .description('list tasks, oldest first')
      .option('--status <status>', 'only tasks with this status')
      .option('--session <id>', 'only tasks of this session (with --url)')
      .option('--json', 'print one JSON object'),
  ).action((options: { status?: string; session?: string }, cmd: Command) =>
    run(async () => {
      const t = targetOf(cmd);
      if ('remote' in t) return (await remote()).remoteList({ ...options, ...t.remote }, io);
      if (options.session !== undefined) {
        throw new CodecallError('INVALID_ARGUMENT', '--session works with --url only');
      }
      return (await local()).tasksList({ ...options, ...t.local }, io);
    }),
  );

  where(
    tasks
      .command('show')
      .description('show a task (the task view); --journal lists its journal entries too')
      .argument('<id>', 'the task id')
      .option('--journal', 'also list the journal entries (verified against their checksums; with --db)')
      .option('--json', 'print one JSON object'),
  ).action((id: string, options: { journal?: boolean }, cmd: Command) =>
    run(async () => {
      const t = targetOf(cmd, ['journal']);
      return 'remote' in t
        ? (await remote()).remoteShow(id, t.remote, io)
        : (await local()).tasksShow(id, { ...options, ...t.local }, io);
    }),
  );

  where(
    tasks
      .command('resume')
      .description('resume a paused task: --db runs it here, replaying its journal; --url asks the service')
      .argument('<id>', 'the task id')
      .option(
        '--tools <module>',
        'the tools module (default with --db: the one the task was started with by exec/run --db)',
      )
      .option('--force', 'accept tools or an engine that changed since the task was journaled')
      .option(
        '--wait',
        'with --db: if another live process holds the running task, wait until it lets go or its lease runs out, then take over',
      )
      .option('--actor <name>', 'who resumes (default: cli:<user>)')
      .option('--reason <text>', 'why (journaled)')
      .option('--json', 'print the task view as JSON on the last line of stdout'),
  ).action(
    (
      id: string,
      options: { tools?: string; force?: boolean; actor?: string; reason?: string; wait?: boolean },
      cmd: Command,
    ) =>
      run(async () => {
        const t = targetOf(cmd, ['tools', 'force', 'actor', 'wait']);
        if ('remote' in t)
          return (await remote()).remoteControl(id, 'resume', { ...options, ...t.remote }, io);
        return (await local()).tasksResume(id, { ...options, ...t.local }, io, env);
      }),
  );

  where(
    tasks
      .command('pause')
      .description('pause a task: a queued one at once, a running one (in any process) at its next poll')
      .argument('<id>', 'the task id')
      .option('--actor <name>', 'who pauses (default: cli:<user>)')
      .option('--reason <text>', 'why (journaled)')
      .option('--json', 'print the task view as JSON'),
  ).action((id: string, options: { actor?: string; reason?: string }, cmd: Command) =>
    run(async () => {
      const t = targetOf(cmd, ['actor']);
      if ('remote' in t) return (await remote()).remoteControl(id, 'pause', { ...options, ...t.remote }, io);
      return (await local()).tasksPause(id, { ...options, ...t.local }, io);
    }),
  );

  const runOn = (cmd: Command): Command =>
    where(
      cmd
        .option('--resume', 'run the task on here afterwards (with --db)')
        .option(
          '--tools <module>',
          'the tools module (with --resume; default: the one the task was started with by exec/run --db)',
        )
        .option('--reason <text>', 'why (journaled with the decision)')
        .option('--actor <name>', 'who decides (default: cli:<user>)')
        .option('--json', 'print the task view as JSON on the last line of stdout'),
    );
  const RUN_ON_LOCAL = ['resume', 'tools', 'actor'];
  for (const decision of ['approve', 'reject'] as const) {
    runOn(
      tasks
        .command(decision)
        .description(`${decision} a pending approval (bound to that exact call); --resume runs the task on`)
        .argument('<id>', 'the task id')
        .argument('<approval_id>', 'the approval id (from `tasks show` or the paused output)'),
    ).action((id: string, approvalId: string, options: Omit<RunOnOptions, 'db'>, cmd: Command) =>
      run(async () => {
        if (decision === 'reject' && options.reason === undefined) {
          throw new CodecallError('INVALID_ARGUMENT', 'reject needs --reason (the program sees it)');
        }
        const t = targetOf(cmd, RUN_ON_LOCAL);
        if ('remote' in t)
          return (await remote()).remoteDecide(id, approvalId, decision, { ...options, ...t.remote }, io);
        return (await local()).tasksDecide(id, approvalId, decision, { ...options, ...t.local }, io, env);
      }),
    );
  }
  runOn(
    tasks
      .command('input')
      .description('answer the input.wait(name) a task waits on with a JSON value; --resume runs it on')
      .argument('<id>', 'the task id')
      .argument('<name>', 'the name the program waits on')
      .argument('<json>', 'the value, as JSON'),
  ).action((id: string, name: string, json: string, options: Omit<RunOnOptions, 'db'>, cmd: Command) =>
    run(async () => {
      const t = targetOf(cmd, [...RUN_ON_LOCAL, 'reason']);
      if ('remote' in t) return (await remote()).remoteInput(id, name, json, t.remote, io);
      return (await local()).tasksInput(id, name, json, { ...options, ...t.local }, io, env);
    }),
  );
  runOn(
    tasks
      .command('resolve')
      .description('decide on a task that needs attention: retry the call, skip it with --result, or fail')
      .argument('<id>', 'the task id')
      .argument('<action>', 'retry | skip | fail')
      .option('--result <json>', 'with skip: the outcome the program sees for the call')
      .option(
        '--call <call_id>',
        'decide this call in doubt only (default: retry covers every call waited on, skip the first)',
      ),
  ).action(
    (
      id: string,
      action: string,
      options: Omit<RunOnOptions, 'db'> & { result?: string; call?: string },
      cmd: Command,
    ) =>
      run(async () => {
        const t = targetOf(cmd, RUN_ON_LOCAL);
        if ('remote' in t) {
          const checked = resolveAction(action, options);
          return (await remote()).remoteResolve(id, checked, { ...options, ...t.remote }, io);
        }
        return (await local()).tasksResolve(id, action, { ...options, ...t.local }, io, env);
      }),
  );

  where(
    tasks
      .command('cancel')
      .description('cancel a task that has not ended (a running one in any process too)')
      .argument('<id>', 'the task id')
      .option('--reason <text>', 'why (journaled)')
      .option('--actor <name>', 'who cancels (default: cli:<user>)')
      .option('--json', 'print the task view as JSON'),
  ).action((id: string, options: { actor?: string; reason?: string }, cmd: Command) =>
    run(async () => {
      const t = targetOf(cmd, ['actor']);
      if ('remote' in t) return (await remote()).remoteControl(id, 'cancel', { ...options, ...t.remote }, io);
      return (await local()).tasksCancel(id, { ...options, ...t.local }, io);
    }),
  );

  where(
    tasks
      .command('events')
      .description("a task's events (its journal) from a service")
      .argument('<id>', 'the task id')
      .option('--after <seq>', 'only events after this seq')
      .option('--json', 'print one JSON object'),
    'remote',
  ).action((id: string, options: { after?: string }, cmd: Command) =>
    run(async () => (await remote()).remoteEvents(id, { ...options, ...remoteOf(cmd) }, io)),
  );

  where(
    tasks
      .command('watch')
      .description('follow a task on a service until it ends (exit 0 succeeded, 1 failed or cancelled)')
      .argument('<id>', 'the task id')
      .option('--json', 'one JSON line per event'),
    'remote',
  ).action((id: string, _options: unknown, cmd: Command) =>
    run(async () => (await remote()).remoteWatch(id, remoteOf(cmd), io)),
  );
}
