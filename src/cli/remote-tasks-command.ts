import { readFile } from 'node:fs/promises';
import { inputFiles, languageOfFile, programText } from './program-files.ts';
import { createClient } from '../client/index.ts';
import type { CodecallClient, ControlAction, SubmitRequest } from '../client/index.ts';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { TaskStatus } from '../spec/index.ts';
import { GUEST_LANGUAGES, isGuestLanguage, TASK_TRANSITIONS, taskBudgetsToWire } from '../spec/index.ts';
import { budgetsOf } from './budget-options.ts';
import type { BudgetOptions } from './budget-options.ts';
import type { CliIo } from './cli-io.ts';
import { EXIT_USAGE } from './exit-codes.ts';
import { integerOption, positiveOption } from './number-options.ts';
import { remoteHint } from './remote-hints.ts';
import { watchTask } from './remote-watch.ts';
import { corruptLine, taskDetailText, taskLine } from './task-view.ts';
import type { CorruptTaskItem, TaskListItem, TaskView } from '../api/index.ts';

export interface RemoteOptions {
  url: string;
  key?: string | undefined;
  json?: boolean;
}

export interface SubmitOptions extends RemoteOptions, BudgetOptions {
  /** Agent mode: what a model is to do (instead of a program file). */
  instruction?: string;
  mode?: string;
  maxSteps?: string;
  /** Input files (repeatable), under their base names. */
  file?: string[];
  language?: string;
  tools?: string;
  timeout?: string;
  cpu?: string;
  memory?: string;
  session?: string;
  callbackUrl?: string;
  maxRetries?: string;
  priority?: string;
  metadata?: string;
  idempotencyKey?: string;
  wait?: boolean;
}

const STATUSES = Object.keys(TASK_TRANSITIONS) as TaskStatus[];

/**
 * Runs the HTTP part of a verb (its flags already checked): a server's error prints `error CODE: message` and
 * exits 1; a missing or refused key exits 2, like a usage error, since the fix is in the command line.
 */
async function overHttp(
  options: RemoteOptions,
  io: CliIo,
  fn: (client: CodecallClient) => Promise<number>,
): Promise<number> {
  const client = createClient({ url: options.url, key: options.key });
  try {
    return await fn(client);
  } catch (e) {
    if (!isCodecallError(e)) throw e;
    const code = typeof e.details.server_code === 'string' ? e.details.server_code : e.code;
    io.stderr(`error ${code}: ${e.message}\n`);
    const hint = remoteHint(e, options.url, options.key !== undefined);
    if (hint !== null) io.stderr(`hint: ${hint}\n`);
    return e.code === 'UNAUTHORIZED' || e.code === 'KEY_REVOKED' ? EXIT_USAGE : 1;
  }
}

/** `codecall tasks submit FILE --url`: POST /api/v1/tasks; with --wait, follows it to its end. */
export async function remoteSubmit(
  file: string | undefined,
  options: SubmitOptions,
  io: CliIo,
): Promise<number> {
  const request = await submitRequest(file, options);
  return overHttp(options, io, async (client) => {
    const created = await client.submit(request, { idempotencyKey: options.idempotencyKey });
    if (!options.wait) {
      if (options.json) io.stdout(`${JSON.stringify(created)}\n`);
      else {
        io.stdout(`${created.task_id}\n`);
        io.stderr(
          `submitted; follow it with: codecall tasks watch ${created.task_id} --url ${options.url}\n`,
        );
      }
      return 0;
    }
    io.stderr(`submitted task ${created.task_id}\n`);
    const end = await watchTask(
      { client, taskId: created.task_id, json: false, quiet: options.json === true, url: options.url },
      io,
    );
    if (options.json) io.stdout(`${JSON.stringify(end)}\n`);
    return end.status === 'succeeded' ? 0 : 1;
  });
}

async function submitRequest(file: string | undefined, options: SubmitOptions): Promise<SubmitRequest> {
  if ((file === undefined) === (options.instruction === undefined)) {
    throw new CodecallError('INVALID_ARGUMENT', 'give a program FILE or --instruction TEXT (one of them)');
  }
  let code: string | undefined;
  if (file !== undefined) {
    try {
      code = await readFile(file, 'utf8');
    } catch {
      throw new CodecallError('NOT_FOUND', `program not found: ${file}`);
    }
  }
  if (options.mode !== undefined && !['code', 'function_calling'].includes(options.mode)) {
    throw new CodecallError('INVALID_ARGUMENT', '--mode must be one of code, function_calling');
  }
  const files = (await inputFiles(options.file ?? [])).map((f) => ({
    name: f.name,
    content_base64: Buffer.from(f.data).toString('base64'),
  }));
  const language = options.language ?? (file === undefined ? 'javascript' : languageOfFile(file));
  if (!isGuestLanguage(language)) {
    throw new CodecallError('INVALID_ARGUMENT', `--language must be one of ${GUEST_LANGUAGES.join(', ')}`);
  }
  const limits = {
    ...(options.timeout === undefined
      ? {}
      : { timeout_seconds: positiveOption('--timeout', options.timeout) }),
    ...(options.cpu === undefined ? {} : { cpu_seconds: positiveOption('--cpu', options.cpu) }),
    ...(options.memory === undefined ? {} : { max_memory_mb: positiveOption('--memory', options.memory) }),
  };
  const budgets = budgetsOf(options);
  const constraints = {
    ...limits,
    ...(budgets === null ? {} : { budgets: taskBudgetsToWire(budgets) }),
  };
  const tools = options.tools
    ?.split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (options.callbackUrl !== undefined && !URL.canParse(options.callbackUrl)) {
    throw new CodecallError('INVALID_ARGUMENT', '--callback-url must be a URL');
  }
  let metadata: Record<string, unknown> | undefined;
  if (options.metadata !== undefined) {
    const parsed = parseJson(options.metadata, '--metadata');
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new CodecallError('INVALID_ARGUMENT', '--metadata must be a JSON object');
    }
    metadata = parsed as Record<string, unknown>;
  }
  // Only the fields given: a server that does not know one yet refuses it by name rather than guessing.
  return {
    ...(code === undefined ? {} : { code }),
    ...(options.instruction === undefined ? {} : { instruction: options.instruction }),
    ...(options.mode === undefined ? {} : { mode: options.mode as 'code' | 'function_calling' }),
    ...(options.maxSteps === undefined
      ? {}
      : { max_steps: integerOption('--max-steps', options.maxSteps, { min: 1, max: 100 }) }),
    ...(files.length > 0 ? { files } : {}),
    language,
    ...(tools === undefined ? {} : { tools }),
    ...(Object.keys(constraints).length > 0 ? { tool_constraints: constraints } : {}),
    ...(options.session === undefined ? {} : { session_id: options.session }),
    ...(options.callbackUrl === undefined ? {} : { callback_url: options.callbackUrl }),
    ...(options.maxRetries === undefined
      ? {}
      : { max_retries: integerOption('--max-retries', options.maxRetries, { min: 0, max: 100 }) }),
    ...(options.priority === undefined ? {} : { priority: integerOption('--priority', options.priority) }),
    ...(metadata === undefined ? {} : { metadata }),
  };
}

/** `codecall tasks revise ID FILE --url`: POST /tasks/:id/revise; prints the new task and how to follow it. */
export async function remoteRevise(
  id: string,
  file: string,
  options: RemoteOptions & { rerunReads?: boolean; idempotencyKey?: string },
  io: CliIo,
): Promise<number> {
  const code = await programText(file);
  return overHttp(options, io, async (client) => {
    const view = await client.revise(
      id,
      { code, ...(options.rerunReads ? { rerun_reads: true } : {}) },
      { idempotencyKey: options.idempotencyKey },
    );
    if (options.json) io.stdout(`${JSON.stringify(view)}\n`);
    else {
      io.stdout(`${view.task_id}\n`);
      io.stderr(
        `task ${view.task_id} revises ${id}; follow it with: codecall tasks watch ${view.task_id} --url ${options.url}\n`,
      );
    }
    return 0;
  });
}

/** `codecall tasks list --url`: every page, oldest first. */
export async function remoteList(
  options: RemoteOptions & { status?: string; session?: string },
  io: CliIo,
): Promise<number> {
  const status = options.status;
  if (status !== undefined && !STATUSES.includes(status as TaskStatus)) {
    throw new CodecallError('INVALID_ARGUMENT', `--status must be one of ${STATUSES.join(', ')}`);
  }
  return overHttp(options, io, async (client) => {
    const tasks: TaskListItem[] = [];
    const corrupt: CorruptTaskItem[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<CodecallClient['list']>> = await client.list({
        limit: 1000,
        ...(status === undefined ? {} : { status: status as TaskStatus }),
        ...(options.session === undefined ? {} : { sessionId: options.session }),
        ...(cursor === null ? {} : { cursor }),
      });
      tasks.push(...page.tasks);
      // An older server sends no `corrupt`.
      corrupt.push(...(page.corrupt ?? []));
      cursor = page.next_cursor;
    } while (cursor !== null);
    if (options.json) io.stdout(`${JSON.stringify({ tasks, corrupt })}\n`);
    else for (const t of tasks) io.stdout(`${taskLine(t)}\n`);
    if (!options.json) for (const c of corrupt) io.stderr(`${corruptLine(c)}\n`);
    return 0;
  });
}

/** `codecall tasks show ID --url`. */
export function remoteShow(id: string, options: RemoteOptions, io: CliIo): Promise<number> {
  return overHttp(options, io, async (client) => {
    const view = await client.get(id);
    io.stdout(options.json ? `${JSON.stringify(view)}\n` : taskDetailText(view));
    return 0;
  });
}

/** `codecall tasks pause|resume|cancel ID --url`: POST /tasks/:id/control; the server's runner acts on it. */
export function remoteControl(
  id: string,
  action: ControlAction,
  options: RemoteOptions & { reason?: string },
  io: CliIo,
): Promise<number> {
  return overHttp(options, io, async (client) => {
    const view = await client.control(id, { action, reason: options.reason });
    printView(view, options, io);
    return 0;
  });
}

/** `codecall tasks approve|reject ID APPROVAL_ID --url`. */
export function remoteDecide(
  id: string,
  approvalId: string,
  decision: 'approve' | 'reject',
  options: RemoteOptions & { reason?: string },
  io: CliIo,
): Promise<number> {
  return overHttp(options, io, async (client) => {
    const view = await client.decide(id, approvalId, { decision, reason: options.reason });
    printView(view, options, io);
    return 0;
  });
}

/** `codecall tasks input ID NAME JSON --url`. */
export function remoteInput(
  id: string,
  name: string,
  json: string,
  options: RemoteOptions,
  io: CliIo,
): Promise<number> {
  const value = parseJson(json, 'the input value');
  return overHttp(options, io, async (client) => {
    printView(await client.input(id, { name, value }), options, io);
    return 0;
  });
}

/** `codecall tasks resolve ID retry|skip|fail --url`: the decision on a task that needs attention, over HTTP. */
export function remoteResolve(
  id: string,
  action: 'retry' | 'skip' | 'fail',
  options: RemoteOptions & { result?: string; call?: string; reason?: string },
  io: CliIo,
): Promise<number> {
  const result = options.result === undefined ? {} : { result: parseJson(options.result, '--result') };
  return overHttp(options, io, async (client) => {
    const request = {
      action,
      ...result,
      ...(options.call === undefined ? {} : { call_id: options.call }),
      ...(options.reason === undefined ? {} : { reason: options.reason }),
    };
    printView(await client.resolveAttention(id, request), options, io);
    return 0;
  });
}

/** `codecall tasks events ID --url`: the task's journal from after --after, every page. */
export async function remoteEvents(
  id: string,
  options: RemoteOptions & { after?: string },
  io: CliIo,
): Promise<number> {
  let after =
    options.after === undefined ? 0 : integerOption('--after', options.after, { min: 0, max: 1e12 });
  return overHttp(options, io, async (client) => {
    const events = [];
    for (;;) {
      const page = await client.events(id, { after, limit: 1000 });
      events.push(...page.events);
      if (page.next_after === null) break;
      after = page.next_after;
    }
    if (options.json) io.stdout(`${JSON.stringify({ events })}\n`);
    else {
      for (const e of events) {
        io.stdout(
          `${String(e.seq).padStart(5)}  ${e.created_at}  ${e.type.padEnd(18)} ${JSON.stringify(e.data)}\n`,
        );
      }
    }
    return 0;
  });
}

/** `codecall tasks watch ID --url`: exit 0 when it succeeds, 1 when it fails or is cancelled. */
export function remoteWatch(id: string, options: RemoteOptions, io: CliIo): Promise<number> {
  return overHttp(options, io, async (client) => {
    const end = await watchTask({ client, taskId: id, json: options.json === true, url: options.url }, io);
    return end.status === 'succeeded' ? 0 : 1;
  });
}

function printView(view: TaskView, options: RemoteOptions, io: CliIo): void {
  if (options.json) io.stdout(`${JSON.stringify(view)}\n`);
  else
    io.stderr(`task ${view.task_id} ${view.status}${view.pause_reason ? ` (${view.pause_reason})` : ''}\n`);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CodecallError('INVALID_ARGUMENT', `${what} must be JSON (for a string, quote it: '"text"')`);
  }
}
