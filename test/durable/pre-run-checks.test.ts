import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CodecallError } from '../../src/errors/index.ts';
import type { SandboxDriver, TaskInput, TaskStore } from '../../src/spec/index.ts';
import { SANDBOX_DRIVER_API_VERSION } from '../../src/spec/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { prepareRun } from '../../src/durable/pre-run-checks.ts';
import type { PreRunEnv } from '../../src/durable/pre-run-checks.ts';
import { TaskRun } from '../../src/durable/task-run.ts';

const driver: SandboxDriver = {
  name: 'fake',
  apiVersion: SANDBOX_DRIVER_API_VERSION,
  engine: 'fake@1',
  languages: ['javascript'],
  ready: () => Promise.resolve(),
  execute: () => Promise.reject(new Error('not run by the checks')),
  close: () => Promise.resolve(),
};
const tools = { bindings: [], get: () => undefined };
const code: TaskInput = { kind: 'code', code: 'return 1', language: 'javascript', seed: 1 };

describe('the checks before a run', () => {
  let store: TaskStore;
  beforeEach(async () => {
    store = await createSqliteTaskStore({ path: ':memory:' });
  });
  afterEach(() => store.close());

  /** Claims the task and runs the checks as the runner would. */
  async function check(taskId: string, env: Partial<PreRunEnv> = {}) {
    const lease = await store.claimTask('runner', { leaseMs: 60_000, taskId });
    if (!lease) throw new Error('not claimable');
    const run = new TaskRun(lease, { store, leaseMs: 60_000 });
    const task = (await store.getTask(taskId))!;
    const base = { drivers: [driver], tools, agent: undefined, acceptChangedTools: false };
    const options = { maxStalledAttempts: 3, clock: () => 1_000, ...base, ...env };
    return prepareRun(task, { store, run, ...options });
  }
  const journalTypes = async (taskId: string) => (await store.readJournal(taskId)).map((e) => e.type);
  const errorOf = (verdict: Awaited<ReturnType<typeof check>>): CodecallError | undefined =>
    verdict.kind === 'fail' ? verdict.error : undefined;

  it('lets a fresh task go on, with its driver and the attempt to journal last', async () => {
    const task = await store.createTask(code);
    const prepared = await check(task.id);
    expect(prepared).toMatchObject({ kind: 'run', driver, language: 'javascript' });
    if (prepared.kind !== 'run') return;
    expect(prepared.journalBefore).toEqual([{ type: 'control', data: { action: 'attempt', stalled: 0 } }]);
    // The manifest check journals the tools and engine of the first run at once.
    expect(await journalTypes(task.id)).toEqual(['task_input', 'manifest']);
  });

  it('honours a pause or cancel asked while nobody ran the task, before any other check', async () => {
    // Past its deadline too: the cancel asked first is what the task ends in.
    const task = await store.createTask(code, { attributes: { deadlineAt: 500 } });
    await store.claimTask('dead-worker', { leaseMs: 1, taskId: task.id });
    await store.requestControl(task.id, 'cancel');
    await new Promise((resolve) => setTimeout(resolve, 10)); // the dead worker's lease expires
    const verdict = await check(task.id);
    expect(verdict).toMatchObject({ kind: 'settled', task: { status: 'cancelled', requestedAction: null } });
    expect(await journalTypes(task.id)).toEqual(['task_input', 'control']);
  });

  it('fails a task past its deadline before it looks for a driver', async () => {
    const task = await store.createTask({ ...code, language: 'python' }, { attributes: { deadlineAt: 500 } });
    expect(errorOf(await check(task.id))?.code).toBe('DEADLINE_EXCEEDED');
  });

  it('fails a task no driver here runs, naming the drivers', async () => {
    const task = await store.createTask({ ...code, language: 'python' });
    const error = errorOf(await check(task.id));
    expect(error?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error?.details).toEqual({ drivers: ['fake'] });
  });

  it('stops a crash loop before the manifest check journals anything', async () => {
    const task = await store.createTask(code);
    const lease = await store.claimTask('dead', { leaseMs: 60_000, taskId: task.id });
    const attempts = [0, 1, 2].map((stalled) => ({
      type: 'control' as const,
      data: { action: 'attempt' as const, stalled },
    }));
    await store.appendJournal(task.id, attempts, { fencingToken: lease!.fencingToken });
    await store.releaseLease(lease!);
    expect(errorOf(await check(task.id))?.code).toBe('CRASH_LOOP');
    expect(await journalTypes(task.id)).not.toContain('manifest');
  });

  it('fails an instruction task without a model only after the manifest is journaled', async () => {
    const task = await store.createTask({
      kind: 'instruction',
      instruction: 'sum 1 and 2',
      mode: 'code',
      maxSteps: 3,
      maxStepRetries: 1,
      language: 'javascript',
      seed: 1,
    });
    expect(errorOf(await check(task.id))?.code).toBe('MODEL_NOT_CONFIGURED');
    expect(await journalTypes(task.id)).toContain('manifest');
  });
});
