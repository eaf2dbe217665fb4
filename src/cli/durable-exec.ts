import { inspect } from 'node:util';
import type { CliIo } from './cli-io.ts';
import type { Runtime, RuntimeEvent, TaskView } from '../api/index.ts';

export interface RunHereOptions {
  readonly runtime: Runtime;
  readonly taskId: string;
  readonly dbPath: string;
  readonly json: boolean;
  /** Shows the task's events as it runs (default: its console lines). */
  readonly progress?: (event: RuntimeEvent) => void;
}

/**
 * Runs one stored task in this process until it ends or pauses, streaming the guest's console to stderr. SIGINT
 * pauses the task (it stays resumable) instead of killing the process. Exit code: 0 for succeeded or paused,
 * 1 for failed or cancelled.
 */
export async function runTaskHere(options: RunHereOptions, io: CliIo): Promise<number> {
  const { runtime, taskId } = options;
  const controller = new AbortController();
  const onSigint = (): void => {
    io.stderr(`pausing task ${taskId} (SIGINT)\n`);
    controller.abort();
  };
  const off = runtime.subscribe(
    taskId,
    options.progress ??
      ((e) => {
        if (e.type === 'log') io.stderr(`${e.level === 'log' ? '' : `[${e.level}] `}${e.message}\n`);
      }),
  );
  process.once('SIGINT', onSigint);
  let view: TaskView;
  try {
    view = await runtime.run(taskId, { signal: controller.signal });
  } finally {
    process.off('SIGINT', onSigint);
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

/** The last stdout line with --json (the task view), or a human summary on stderr. */
export function reportView(view: TaskView, options: { json: boolean; dbPath: string }, io: CliIo): void {
  if (options.json) {
    io.stdout(`${JSON.stringify(view)}\n`);
    return;
  }
  const db = `--db ${options.dbPath}`;
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
      for (const a of view.pending_approvals) {
        io.stderr(`approval ${a.id}: ${a.tool}(${JSON.stringify(a.arguments)})\n`);
      }
      for (const i of view.pending_inputs) {
        io.stderr(`waiting for input "${i.name}"${i.deadline ? ` until ${i.deadline}` : ''}\n`);
      }
      for (const c of view.attention_calls) {
        const call = `${c.tool}(${JSON.stringify(c.arguments)})`;
        io.stderr(
          c.earlier
            ? `needs attention: ${call} changes ${c.earlier.tool}(${JSON.stringify(c.earlier.arguments)}), which an earlier attempt already ran\n`
            : `needs attention: ${call} may or may not have run\n`,
        );
      }
      io.stderr(`task ${view.task_id} paused (${view.pause_reason ?? 'unknown'}); ${nextStep(view, db)}\n`);
      break;
    default:
      io.stderr(
        `task ${view.task_id} ${view.status}${view.error ? `: ${view.error.code}: ${view.error.message}` : ''}\n`,
      );
  }
}

function nextStep(view: TaskView, db: string): string {
  const id = view.task_id;
  switch (view.pause_reason) {
    case 'approval_required':
      return `decide with: codecall tasks approve|reject ${id} APPROVAL_ID ${db} --resume`;
    case 'awaiting_input':
      return `answer with: codecall tasks input ${id} NAME JSON ${db} --resume`;
    case 'needs_attention':
      return view.attention
        ? `decide with: codecall tasks resolve ${id} retry|skip|fail [--result JSON] ${db} --resume`
        : `accept the changed tools with: codecall tasks resume ${id} ${db} --force, or fail it with: codecall tasks resolve ${id} fail ${db}`;
    default:
      return `resume with: codecall tasks resume ${id} ${db}`;
  }
}
