import { modelConfigFrom } from '../model/index.ts';
import { userInfo } from 'node:os';
import { resolveAction } from './resolve-action.ts';
import { CodecallError } from '../errors/index.ts';
import type { TaskStatus } from '../spec/index.ts';
import { isTerminal, TASK_TRANSITIONS } from '../spec/index.ts';
import { pausingLine, reportView, runTaskHere, shellArg, stoppedLine } from './durable-exec.ts';
import { EXIT_INTERRUPTED } from './exit-codes.ts';
import { leaseHeldElsewhere, leaseHeldError, waitForLease } from './lease-wait.ts';
import { rememberedTools, toolsMetadata } from './remembered-tools.ts';
import { interruptOnSigint } from './sigint.ts';
import { programText } from './program-files.ts';
import type { CliIo } from './cli-io.ts';
import { withCliRuntime } from './task-runtime.ts';
import { corruptLine, taskDetailText, taskLine } from './task-view.ts';
import type { CorruptTaskItem, Runtime, TaskView } from '../api/index.ts';

export interface TasksOptions {
  db: string;
  json?: boolean;
}

/** Options of the commands that may run the task on here afterwards. */
export interface RunOnOptions extends TasksOptions {
  tools?: string;
  resume?: boolean;
  actor?: string;
  reason?: string;
}

const STATUSES = Object.keys(TASK_TRANSITIONS) as TaskStatus[];

function actorOf(options: { actor?: string }): string {
  return options.actor ?? `cli:${userInfo().username}`;
}

function actorAndReason(options: { actor?: string; reason?: string }): { actor: string; reason?: string } {
  return { actor: actorOf(options), ...(options.reason === undefined ? {} : { reason: options.reason }) };
}

/** `codecall tasks list`: every task (oldest first), optionally of one status. */
export async function tasksList(options: TasksOptions & { status?: string }, io: CliIo): Promise<number> {
  const status = options.status;
  if (status !== undefined && !STATUSES.includes(status as TaskStatus)) {
    throw new CodecallError('INVALID_ARGUMENT', `--status must be one of ${STATUSES.join(', ')}`);
  }
  return withCliRuntime({ db: options.db, mustExist: true, runs: false }, async ({ runtime }) => {
    const tasks: TaskView[] = [];
    const corrupt: CorruptTaskItem[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<Runtime['list']>> = await runtime.list({
        limit: 1000,
        ...(status === undefined ? {} : { status: status as TaskStatus }),
        ...(cursor === null ? {} : { cursor }),
      });
      tasks.push(...page.tasks);
      corrupt.push(...page.corrupt);
      cursor = page.next_cursor;
    } while (cursor !== null);
    // A task the store cannot read is skipped and said (the rest is listed); `codecall audit verify` says more.
    if (options.json) io.stdout(`${JSON.stringify({ tasks, corrupt })}\n`);
    else for (const t of tasks) io.stdout(`${taskLine(t)}\n`);
    if (!options.json) for (const c of corrupt) io.stderr(`${corruptLine(c)}\n`);
    return 0;
  });
}

/** `codecall tasks show ID`: the task view; with --journal, its journal entries too. */
export async function tasksShow(
  id: string,
  options: TasksOptions & { journal?: boolean },
  io: CliIo,
): Promise<number> {
  return withCliRuntime({ db: options.db, mustExist: true, runs: false }, async ({ runtime, store }) => {
    const view = await mustGet(runtime, id);
    const journal = options.journal ? await store.readJournal(id) : null;
    if (options.json) {
      const entries = journal?.map((e) => ({
        seq: e.seq,
        type: e.type,
        data: e.data,
        created_at: e.createdAt,
      }));
      io.stdout(`${JSON.stringify(entries ? { ...view, journal: entries } : view)}\n`);
      return 0;
    }
    io.stdout(taskDetailText(view));
    for (const e of journal ?? [])
      io.stdout(`${String(e.seq).padStart(5)}  ${e.type.padEnd(18)} ${JSON.stringify(e.data)}\n`);
    return 0;
  });
}

/**
 * `codecall tasks resume ID`: a paused task becomes runnable and runs here by replaying its journal; a pending
 * task (or a running one whose worker died) runs here as it is. Without --tools it runs with the tools module
 * remembered with the task. A task a live process elsewhere still holds is refused, saying until when; with
 * --wait it is taken over once that process lets go of it or stops renewing its lease. SIGINT stops the wait,
 * or pauses the task once it runs here.
 */
export async function tasksResume(
  id: string,
  options: TasksOptions & {
    tools?: string;
    force?: boolean;
    actor?: string;
    reason?: string;
    wait?: boolean;
  },
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  let runs = false;
  const interrupt = interruptOnSigint(io.stderr, {
    first: () => (runs ? pausingLine(id) : `interrupted (SIGINT): task ${id} is left as it was`),
    second: () => stoppedLine(id, options.db),
  });
  try {
    return await withCliRuntime(
      // An instruction task goes on with the model the environment names (OPENAI_API_KEY, MISTRAL_API_KEY, ...).
      {
        db: options.db,
        mustExist: true,
        runs: true,
        tools: options.tools,
        toolsOf: id,
        model: modelConfigFrom(env),
        env,
      },
      async ({ runtime, store, toolsModule }) => {
        let view = await mustGet(runtime, id);
        const here = { dbPath: options.db, json: options.json === true, tools: toolsModule };
        const held = view.status === 'running' ? await leaseHeldElsewhere(store, id) : null;
        if (held !== null && held.expiresAt !== null) {
          if (options.wait !== true)
            throw leaseHeldError(id, options.db, { ...held, expiresAt: held.expiresAt });
          if (!(await waitForLease(store, id, io, interrupt.signal))) return EXIT_INTERRUPTED;
          view = await mustGet(runtime, id);
          if (isTerminal(view.status)) {
            // It ended meanwhile in the process that held it: nothing to run.
            reportView(view, here, io);
            return view.status === 'succeeded' ? 0 : 1;
          }
        }
        if (interrupt.signal.aborted) return EXIT_INTERRUPTED;
        if (view.status === 'paused') {
          await runtime.resume(id, { ...actorAndReason(options), force: options.force === true });
        }
        runs = true;
        return await runTaskHere({ runtime, taskId: id, ...here, signal: interrupt.signal }, io);
      },
    );
  } finally {
    interrupt.release();
  }
}

/** `codecall tasks pause ID`: a queued task pauses at once; a running one when its runner sees the request. */
export async function tasksPause(
  id: string,
  options: TasksOptions & { actor?: string; reason?: string },
  io: CliIo,
): Promise<number> {
  return withCliRuntime({ db: options.db, mustExist: true, runs: false }, async ({ runtime }) => {
    let view = await runtime.pause(id, actorAndReason(options));
    if (view.status === 'running') {
      io.stderr(`pause requested; waiting for the process running task ${id}\n`);
      view = await runtime.wait(id, { signal: AbortSignal.timeout(10_000) }).catch(() => view);
    }
    reportView(view, { json: options.json === true, dbPath: options.db }, io);
    return 0;
  });
}

/** `codecall tasks cancel ID`: ends any task that has not ended; a running one's tool calls are aborted. */
export async function tasksCancel(
  id: string,
  options: TasksOptions & { actor?: string; reason?: string },
  io: CliIo,
): Promise<number> {
  return withCliRuntime({ db: options.db, mustExist: true, runs: false }, async ({ runtime }) => {
    let view = await runtime.cancel(id, actorAndReason(options));
    if (view.status === 'running') {
      io.stderr(`cancel requested; waiting for the process running task ${id}\n`);
      view = await runtime.wait(id, { signal: AbortSignal.timeout(10_000) }).catch(() => view);
    }
    if (options.json) io.stdout(`${JSON.stringify(view)}\n`);
    else io.stderr(`task ${id} ${view.status === 'cancelled' ? 'cancelled' : `is ${view.status}`}\n`);
    return 0;
  });
}

/** Applies a human's action to a paused task; with --resume, runs it on here (with the remembered tools). */
async function actOnPaused(
  id: string,
  options: RunOnOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  act: (runtime: Runtime) => Promise<TaskView>,
): Promise<number> {
  const runs = options.resume === true;
  return withCliRuntime(
    {
      db: options.db,
      mustExist: true,
      runs,
      tools: options.tools,
      toolsOf: id,
      // With --resume an instruction task goes on with the model the environment names, as `tasks resume` does.
      ...(runs ? { model: modelConfigFrom(env), env } : {}),
    },
    async ({ runtime, toolsModule }) => {
      const view = await act(runtime);
      const here = { dbPath: options.db, json: options.json === true, tools: toolsModule };
      if (runs && view.status === 'pending') return runTaskHere({ runtime, taskId: id, ...here }, io);
      if (options.json) io.stdout(`${JSON.stringify(view)}\n`);
      else if (view.status === 'pending') {
        const tools = toolsModule ?? rememberedTools(view.metadata);
        io.stderr(
          `recorded; run it on with: codecall tasks resume ${id} --db ${shellArg(options.db)}${tools === null ? '' : ` --tools ${shellArg(tools)}`}\n`,
        );
      } else reportView(view, { ...here, json: false }, io);
      return view.status === 'failed' ? 1 : 0;
    },
  );
}

/** `codecall tasks approve|reject ID APPROVAL_ID`: records the decision (bound to that call). */
export function tasksDecide(
  id: string,
  approvalId: string,
  decision: 'approve' | 'reject',
  options: RunOnOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const reason = options.reason === undefined ? {} : { reason: options.reason };
  return actOnPaused(id, options, io, env, (runtime) =>
    runtime.decide(id, [{ approvalId, decision, ...reason }], { actor: actorOf(options) }),
  );
}

/** `codecall tasks input ID NAME JSON`: answers the task's `input.wait(NAME)`. */
export function tasksInput(
  id: string,
  name: string,
  json: string,
  options: RunOnOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const value = parseJson(json, 'the input value');
  return actOnPaused(id, options, io, env, (runtime) =>
    runtime.provideInput(id, name, value, { actor: actorOf(options) }),
  );
}

/** `codecall tasks resolve ID retry|skip|fail`: a human's decision on a task that needs attention. */
export function tasksResolve(
  id: string,
  action: string,
  options: RunOnOptions & { result?: string; call?: string },
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const checked = resolveAction(action, options);
  const result = options.result === undefined ? {} : { result: parseJson(options.result, '--result') };
  return actOnPaused(id, options, io, env, (runtime) =>
    runtime.resolveAttention(
      id,
      { action: checked, ...result, ...(options.call === undefined ? {} : { callId: options.call }) },
      { actor: actorOf(options), ...(options.reason === undefined ? {} : { reason: options.reason }) },
    ),
  );
}

/**
 * `codecall tasks revise ID FILE`: a new task runs FILE in place of the ended task ID's program, taking over the
 * calls it completed (ADR 0034), and runs here like `exec --db`.
 */
export async function tasksRevise(
  id: string,
  file: string,
  options: TasksOptions & { tools?: string; actor?: string; rerunReads?: boolean },
  io: CliIo,
): Promise<number> {
  const code = await programText(file);
  // Without --tools, the revision runs with the tools module remembered with the task it revises.
  return withCliRuntime(
    { db: options.db, mustExist: true, runs: true, tools: options.tools, toolsOf: id },
    async ({ runtime, toolsModule }) => {
      const view = await runtime.revise(
        id,
        {
          code,
          ...(options.rerunReads ? { rerunReads: true } : {}),
          // A --tools given here is the revision's own, remembered for its resumes (not the revised task's).
          ...(options.tools === undefined ? {} : { metadata: toolsMetadata(options.tools) }),
        },
        { actor: actorOf(options) },
      );
      const tools = toolsModule === null ? '' : ` --tools ${shellArg(toolsModule)}`;
      io.stderr(
        `task ${view.task_id} revises ${id}; it runs here (if stopped, run it on with: codecall tasks resume ${view.task_id} --db ${shellArg(options.db)}${tools})\n`,
      );
      return runTaskHere(
        {
          runtime,
          taskId: view.task_id,
          dbPath: options.db,
          json: options.json === true,
          tools: toolsModule,
        },
        io,
      );
    },
  );
}

async function mustGet(runtime: Runtime, id: string): Promise<TaskView> {
  const view = await runtime.get(id);
  if (!view) throw new CodecallError('NOT_FOUND', `no task ${id}`, { details: { task_id: id } });
  return view;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CodecallError('INVALID_ARGUMENT', `${what} must be JSON (for a string, quote it: '"text"')`);
  }
}
