import { inspect } from 'node:util';
import type { CliIo } from './cli-io.ts';
import { interruptOnSigint } from './sigint.ts';
import { rememberedTools } from './remembered-tools.ts';
import type { Runtime, RuntimeEvent, TaskView } from '../api/index.ts';

export interface RunHereOptions {
  readonly runtime: Runtime;
  readonly taskId: string;
  readonly dbPath: string;
  readonly json: boolean;
  /** The tools module the task runs with here (the next steps name it). */
  readonly tools?: string | null;
  /** Shows the task's events as it runs (default: its console lines). */
  readonly progress?: (event: RuntimeEvent) => void;
  /**
   * Pauses the task when aborted, at any moment (before it is claimed too). Without it, SIGINT does that for the
   * time of the run (a command that took SIGINT over from its start passes its own).
   */
  readonly signal?: AbortSignal;
}

/**
 * Runs one stored task in this process until it ends or pauses, streaming the guest's console to stderr. SIGINT
 * pauses the task (it stays resumable) instead of killing the process. Exit code: 0 for succeeded or paused,
 * 1 for failed or cancelled.
 */
export async function runTaskHere(options: RunHereOptions, io: CliIo): Promise<number> {
  const { runtime, taskId } = options;
  const own = options.signal
    ? undefined
    : interruptOnSigint(io.stderr, {
        first: () => pausingLine(taskId),
        second: () => stoppedLine(taskId, options.dbPath),
      });
  const signal = options.signal ?? own?.signal;
  const off = runtime.subscribe(
    taskId,
    options.progress ??
      ((e) => {
        if (e.type === 'log') io.stderr(`${e.level === 'log' ? '' : `[${e.level}] `}${e.message}\n`);
      }),
  );
  let view: TaskView;
  try {
    view = await runtime.run(taskId, signal ? { signal } : {});
  } finally {
    own?.release();
    off();
  }
  reportView(view, options, io);
  return view.status === 'succeeded' || view.status === 'paused' ? 0 : 1;
}

/**
 * An agent's answer as `codecall run` (and `tasks resume` of an instruction task) prints it without --json: a
 * string as it is (no quotes, its newlines as newlines), any other value as JSON (indented), so either reads
 * well and pipes on as text or as JSON. A program's result (`exec`) prints as a value (`util.inspect`).
 */
export function answerText(output: unknown): string {
  const text = typeof output === 'string' ? output : (JSON.stringify(output, null, 2) ?? 'null');
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** What the first SIGINT says while a task runs here. */
export function pausingLine(taskId: string): string {
  return `pausing task ${taskId} (SIGINT; a second one stops at once)`;
}

/** What a second SIGINT says: the process ends now, the task is taken over by the next resume. */
export function stoppedLine(taskId: string, dbPath: string): string {
  return `stopped at once (second SIGINT); take task ${taskId} over with: codecall tasks resume ${taskId} --db ${shellArg(dbPath)}`;
}

/**
 * The last stdout line with --json (the task view), or a human summary on stderr. A paused task's next steps go
 * to stderr in both cases: the exact commands, with the task's ids, the database and the tools module.
 */
export function reportView(
  view: TaskView,
  options: { json: boolean; dbPath: string; tools?: string | null | undefined },
  io: CliIo,
): void {
  if (options.json) {
    io.stdout(`${JSON.stringify(view)}\n`);
    if (view.status === 'paused') io.stderr(pausedText(view, options));
    return;
  }
  switch (view.status) {
    case 'succeeded':
      io.stdout(
        view.instruction !== null
          ? answerText(view.result?.output)
          : `${inspect(view.result?.output, { depth: 8, colors: false })}\n`,
      );
      io.stderr(`task ${view.task_id} succeeded\n`);
      break;
    case 'paused':
      io.stderr(pausedText(view, options));
      break;
    default:
      io.stderr(
        `task ${view.task_id} ${view.status}${view.error ? `: ${view.error.code}: ${view.error.message}` : ''}\n`,
      );
  }
}

/** What a paused task waits for, and the commands that go on from here. */
function pausedText(view: TaskView, options: { dbPath: string; tools?: string | null | undefined }): string {
  const lines: string[] = [];
  for (const a of view.pending_approvals) {
    lines.push(`approval ${a.id}: ${a.tool}(${JSON.stringify(a.arguments)})`);
  }
  for (const i of view.pending_inputs) {
    lines.push(`waiting for input "${i.name}"${i.deadline ? ` until ${i.deadline}` : ''}`);
    // A tool's request mid-call (an MCP elicitation): what it asks, and the shape of the answer.
    if (i.message !== undefined) lines.push(`  ${i.message}`, `  answer as: ${JSON.stringify(i.schema)}`);
  }
  for (const c of view.attention_calls) {
    const call = `${c.tool}(${JSON.stringify(c.arguments)})`;
    lines.push(
      c.earlier
        ? `needs attention: ${call} changes ${c.earlier.tool}(${JSON.stringify(c.earlier.arguments)}), which an earlier attempt already ran`
        : `needs attention: ${call} may or may not have run`,
    );
  }
  const next = nextSteps(view, {
    db: options.dbPath,
    tools: options.tools ?? rememberedTools(view.metadata),
  });
  lines.push(`task ${view.task_id} paused (${view.pause_reason ?? 'unknown'}); ${next.intro}:`);
  lines.push(...next.commands.map((c) => `  ${c}`));
  return `${lines.join('\n')}\n`;
}

/** A word the shell passes as it is: as written when it holds nothing the shell reads, else single-quoted. */
export function shellArg(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The commands that take a paused task on, each exact (ids, database, tools module) and ready to paste; a `#`
 * comment says what one does when there is a choice.
 */
export function nextSteps(
  view: TaskView,
  where: { db: string; tools: string | null },
): { intro: string; commands: string[] } {
  const id = view.task_id;
  const db = `--db ${shellArg(where.db)}`;
  const tools = where.tools === null ? '' : ` --tools ${shellArg(where.tools)}`;
  const cli = (...words: string[]): string => `codecall tasks ${words.join(' ')}`;
  const resume = cli('resume', id, db + tools);
  switch (view.pause_reason) {
    case 'approval_required': {
      const approvals = view.pending_approvals;
      // One request: decide and run on in one go. Several: decide each, then run on once.
      const runOn = approvals.length === 1 ? `${tools} --resume` : '';
      const commands = approvals.flatMap((a) => [
        cli('approve', id, a.id, db + runOn),
        cli('reject', id, a.id, '--reason WHY', db + runOn),
      ]);
      return approvals.length === 1
        ? { intro: 'approve or reject with one of', commands }
        : { intro: 'approve or reject each, then run it on', commands: [...commands, resume] };
    }
    case 'awaiting_input': {
      const inputs = view.pending_inputs;
      const runOn = inputs.length === 1 ? `${tools} --resume` : '';
      const commands = inputs.map((i) => cli('input', id, shellArg(i.name), 'JSON', db + runOn));
      return inputs.length === 1
        ? { intro: 'answer with (JSON: the value, e.g. \'"yes"\' or 42)', commands }
        : { intro: 'answer each (JSON: the value), then run it on', commands: [...commands, resume] };
    }
    case 'needs_attention':
      return view.attention
        ? {
            intro: 'decide with one of',
            commands: [
              `${cli('resolve', id, 'retry', db + tools, '--resume')}   # run the calls again`,
              `${cli('resolve', id, 'skip', '--result JSON', db + tools, '--resume')}   # the program gets JSON as the result`,
              `${cli('resolve', id, 'fail', db)}   # the task fails`,
            ],
          }
        : view.error?.code === 'TOOL_UNAVAILABLE'
          ? {
              intro: `a tool's service could not be reached (${view.error.message}); once it is back, resume, or fail it`,
              commands: [resume, cli('resolve', id, 'fail', db)],
            }
          : {
              intro: 'its tools or engine changed since it was journaled; accept them, or fail it',
              commands: [`${resume} --force`, cli('resolve', id, 'fail', db)],
            };
    default:
      return { intro: 'resume with', commands: [resume] };
  }
}
