import { userInfo } from 'node:os';
import { CodecallError } from '../errors/index.ts';
import type { TaskStatus, TaskStore } from '../spec/index.ts';
import { TASK_TRANSITIONS } from '../spec/index.ts';
import { runStoredTask } from './durable-exec.ts';
import type { CliIo } from './exec-command.ts';
import { loadToolsModule } from './load-tools.ts';
import { openTaskDb } from './task-db.ts';
import { taskDetailJson, taskDetailText, taskLine } from './task-view.ts';

export interface TasksOptions {
  db: string;
  json?: boolean;
}

const STATUSES = Object.keys(TASK_TRANSITIONS) as TaskStatus[];

async function withStore<T>(path: string, fn: (store: TaskStore) => Promise<T>): Promise<T> {
  const store = await openTaskDb(path, true);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function mustGet(store: TaskStore, id: string) {
  const task = await store.getTask(id);
  if (!task) throw new CodecallError('NOT_FOUND', `no task ${id}`, { details: { taskId: id } });
  return task;
}

/** `codecall tasks list`: every task (oldest first), optionally of one status. */
export async function tasksList(options: TasksOptions & { status?: string }, io: CliIo): Promise<number> {
  const status = options.status;
  if (status !== undefined && !STATUSES.includes(status as TaskStatus)) {
    throw new CodecallError('INVALID_ARGUMENT', `--status must be one of ${STATUSES.join(', ')}`);
  }
  return withStore(options.db, async (store) => {
    const tasks = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<TaskStore['listTasks']>> = await store.listTasks({
        limit: 1000,
        ...(status === undefined ? {} : { status: status as TaskStatus }),
        ...(cursor === null ? {} : { cursor }),
      });
      tasks.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor !== null);
    if (options.json) io.stdout(`${JSON.stringify({ tasks: tasks.map((t) => taskDetailJson(t)) })}\n`);
    else for (const t of tasks) io.stdout(`${taskLine(t)}\n`);
    return 0;
  });
}

/** `codecall tasks show ID`: the task, its journal length and last seq. */
export async function tasksShow(id: string, options: TasksOptions, io: CliIo): Promise<number> {
  return withStore(options.db, async (store) => {
    const task = await mustGet(store, id);
    const journal = await store.readJournal(id);
    io.stdout(
      options.json ? `${JSON.stringify(taskDetailJson(task, journal))}\n` : taskDetailText(task, journal),
    );
    return 0;
  });
}

/** `codecall tasks resume ID`: paused -> pending, then runs it here by replaying its journal. */
export async function tasksResume(
  id: string,
  options: TasksOptions & { tools?: string },
  io: CliIo,
): Promise<number> {
  const tools = options.tools ? await loadToolsModule(options.tools) : [];
  return withStore(options.db, async (store) => {
    const task = await mustGet(store, id);
    // A pending task (or a running one whose worker died) is claimable as is; anything else must be paused.
    if (task.status !== 'pending' && task.status !== 'running') {
      await store.updateTask(id, { status: 'pending' }, { expectedVersion: task.version });
    }
    return runStoredTask({ store, taskId: id, tools, dbPath: options.db, json: options.json === true }, io);
  });
}

/** `codecall tasks approve|reject ID APPROVAL_ID`: records the decision (bound to that call) and runs the task on. */
export async function tasksDecide(
  id: string,
  approvalId: string,
  decision: 'approve' | 'reject',
  options: TasksOptions & { tools?: string; reason?: string; actor?: string },
  io: CliIo,
): Promise<number> {
  const tools = options.tools ? await loadToolsModule(options.tools) : [];
  return withStore(options.db, async (store) => {
    await mustGet(store, id);
    const decisions = [
      { approvalId, decision, ...(options.reason === undefined ? {} : { reason: options.reason }) },
    ];
    return runStoredTask(
      {
        store,
        taskId: id,
        tools,
        dbPath: options.db,
        json: options.json === true,
        decisions,
        actor: options.actor ?? `cli:${userInfo().username}`,
      },
      io,
    );
  });
}

/** `codecall tasks cancel ID`: cancels a task that is not running in this process. */
export async function tasksCancel(id: string, options: TasksOptions, io: CliIo): Promise<number> {
  return withStore(options.db, async (store) => {
    const task = await mustGet(store, id);
    if (task.status === 'running') {
      // Its worker holds a lease and would keep running; stop it there (SIGINT pauses it), then cancel.
      throw new CodecallError(
        'ILLEGAL_TRANSITION',
        `task ${id} is running in another process; interrupt it there (SIGINT pauses it), then cancel`,
        { details: { taskId: id, status: task.status } },
      );
    }
    const cancelled = await store.updateTask(
      id,
      { status: 'cancelled', error: { code: 'CANCELLED', message: 'cancelled from the CLI' } },
      { expectedVersion: task.version },
    );
    if (options.json) io.stdout(`${JSON.stringify(taskDetailJson(cancelled))}\n`);
    else io.stderr(`task ${id} cancelled\n`);
    return 0;
  });
}
