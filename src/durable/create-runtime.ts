import { randomInt } from 'node:crypto';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { LogEntry, SandboxDriver, TaskRecord, TaskStore } from '../spec/index.ts';
import { isArtifactStore, isTerminal } from '../spec/index.ts';
import { decideApprovals, provideInput, resolveAttention, resumePaused } from './paused-actions.ts';
import type { PausedAction } from './paused-actions.ts';
import type { RuntimeOptions } from './runtime-types.ts';
import { EventHub } from './event-hub.ts';
import { LiveLogs } from './live-logs.ts';
import { failPastDeadline, resumeAfterShutdown, wakeDue } from './runtime-sweeps.ts';
import type { ApplyAction } from './runtime-sweeps.ts';
import { checkedCallbackUrl, toBatchTasks, toTaskAttributes, toTaskInput } from './submit-input.ts';
import { batchView } from './batch-view.ts';
import { TaskRunner } from './task-runner.ts';
import { taskView } from './task-view.ts';
import { approvalInbox } from './approval-inbox.ts';
import type {
  ActorOptions,
  ApprovalInboxItem,
  ApprovalDecision,
  AttentionDecision,
  BatchView,
  ListFilter,
  Runtime,
  RuntimeEvent,
  RuntimeObserver,
  SubmitInput,
  TaskView,
} from '../api/index.ts';

export const DEFAULT_CONCURRENCY = 4;
/** How often a started runtime looks for work it was not told about (other processes, expired leases, wake-ups). */
export const DEFAULT_POLL_MS = 250;

/** The durable runtime: submit tasks, run them through the journal, steer them, watch them. */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new DurableRuntime(options);
}

class DurableRuntime implements Runtime {
  private readonly store: TaskStore;
  private readonly drivers: readonly SandboxDriver[];
  private readonly runner: TaskRunner;
  private readonly events = new EventHub<RuntimeEvent>();
  private readonly live = new LiveLogs();
  private readonly runs = new Map<string, Promise<TaskRecord | null>>();
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly clock: () => number;
  private readonly observer: RuntimeObserver | undefined;
  private started = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** The fill in progress (claims under way), which close() waits for. */
  private filling: Promise<void> | undefined;

  constructor(options: RuntimeOptions) {
    this.store = options.store;
    this.drivers = options.drivers;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.clock = options.clock ?? Date.now;
    this.observer = options.observer;
    this.runner = new TaskRunner({
      store: options.store,
      drivers: options.drivers,
      tools: options.tools,
      owner: options.owner ?? `runtime-${process.pid}-${randomInt(1e9).toString(36)}`,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(options.acceptChangedTools === undefined ? {} : { acceptChangedTools: options.acceptChangedTools }),
      ...(options.maxStalledAttempts === undefined ? {} : { maxStalledAttempts: options.maxStalledAttempts }),
      ...(options.tenantConcurrency === undefined ? {} : { maxPerTenant: options.tenantConcurrency }),
      ...(options.retryBaseMs === undefined ? {} : { retryBaseMs: options.retryBaseMs }),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      clock: this.clock,
      onEvent: (event) => this.events.emit(event),
    });
    this.events.subscribe('*', (event) => this.live.observe(event));
  }

  async submit(
    input: SubmitInput,
    options: { idempotency?: { readonly key: string; readonly requestHash: string }; actor?: string } = {},
  ): Promise<TaskView> {
    this.assertOpen();
    const record = await this.store.createTask(toTaskInput(input), {
      attributes: toTaskAttributes(input),
      ...(input.id === undefined ? {} : { id: input.id }),
      ...(options.idempotency ? { idempotency: options.idempotency } : {}),
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    });
    this.events.emit({ type: 'status', taskId: record.id, status: 'pending', pauseReason: null });
    this.kick();
    return taskView(record);
  }

  async submitBatch(
    inputs: readonly SubmitInput[],
    options: { tenant?: string; callbackUrl?: string; actor?: string } = {},
  ): Promise<BatchView> {
    this.assertOpen();
    const tenant = options.tenant ?? 'default';
    const { batch, tasks: records } = await this.store.createBatch(toBatchTasks(inputs, tenant), {
      tenant,
      callbackUrl: options.callbackUrl === undefined ? null : checkedCallbackUrl(options.callbackUrl),
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    });
    for (const r of records)
      this.events.emit({ type: 'status', taskId: r.id, status: 'pending', pauseReason: null });
    this.kick();
    return batchView(batch);
  }

  async getBatch(batchId: string): Promise<BatchView | null> {
    const batch = await this.store.getBatch(batchId);
    return batch ? batchView(batch) : null;
  }

  async get(taskId: string): Promise<TaskView | null> {
    const record = await this.store.getTask(taskId);
    return record ? this.viewOf(record) : null;
  }

  async list(filter: ListFilter = {}): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
    const page = await this.store.listTasks(filter);
    const tasks = await Promise.all(page.tasks.map((t) => this.view(t)));
    return { tasks, next_cursor: page.nextCursor };
  }

  async view(record: TaskRecord): Promise<TaskView> {
    // A paused task's view needs its journal (what it waits for); others do not.
    return record.status === 'paused' ? this.viewOf(record) : taskView(record);
  }

  approvals(filter: { readonly tenant?: string } = {}): Promise<ApprovalInboxItem[]> {
    return approvalInbox(this.store, filter.tenant);
  }

  async run(taskId: string, options: { signal?: AbortSignal } = {}): Promise<TaskView> {
    this.assertOpen();
    this.assertCanRun();
    const onAbort = (): void => void this.runner.pause(taskId, 'signal');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const ended = await this.track(taskId, this.runner.runTask(taskId));
      if (!ended) {
        const current = await this.mustGet(taskId);
        throw new CodecallError(
          'ILLEGAL_TRANSITION',
          `task ${taskId} could not be claimed (it is ${current.status}${current.status !== 'running' ? '' : this.runner.has(taskId) ? ' here already' : ' in another worker'})`,
          { details: { status: current.status, pause_reason: current.pauseReason } },
        );
      }
      return this.viewOf(ended);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async wait(
    taskId: string,
    options: { until?: 'settled' | 'terminal'; signal?: AbortSignal } = {},
  ): Promise<TaskView> {
    const done = (r: TaskRecord): boolean =>
      isTerminal(r.status) || (options.until !== 'terminal' && r.status === 'paused');
    for (;;) {
      if (options.signal?.aborted) throw new CodecallError('ABORTED', 'stopped waiting');
      const record = await this.mustGet(taskId);
      if (done(record)) return this.viewOf(record);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, this.pollMs);
        const off = this.subscribe(taskId, (e) => {
          if (e.type === 'status') finish();
        });
        options.signal?.addEventListener('abort', finish, { once: true });
        function finish(): void {
          clearTimeout(timer);
          off();
          resolve();
        }
      });
    }
  }

  pause(taskId: string, options: ActorOptions = {}): Promise<TaskView> {
    return this.observed(taskId, 'pause', this.pauseTask(taskId, options));
  }

  private async pauseTask(taskId: string, options: ActorOptions): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    for (let tries = 0; ; tries++) {
      const task = await this.mustGet(taskId);
      if (task.status === 'running') {
        if (this.runner.pause(taskId, actor)) return this.afterRun(taskId);
        await this.store.requestControl(taskId, 'pause');
        return this.viewOf(await this.mustGet(taskId));
      }
      if (task.status !== 'pending') {
        throw new CodecallError(
          'ILLEGAL_TRANSITION',
          `task ${taskId} is ${task.status}; only a pending or running task pauses`,
          {
            details: { status: task.status, pause_reason: task.pauseReason },
          },
        );
      }
      const paused = await this.apply(
        task,
        {
          patch: { status: 'paused', pauseReason: 'user_request' },
          append: [{ type: 'control', data: { action: 'pause', actor } }],
        },
        tries,
        actor,
      );
      if (paused) return paused;
    }
  }

  resume(taskId: string, options: ActorOptions & { force?: boolean } = {}): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    const resumed = this.onPaused(taskId, actor, (task) => resumePaused(task, actor, options.force === true));
    return this.observed(taskId, 'resume', resumed);
  }

  async cancel(taskId: string, options: ActorOptions = {}): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    for (let tries = 0; ; tries++) {
      const task = await this.mustGet(taskId);
      if (isTerminal(task.status)) {
        throw new CodecallError(
          'ILLEGAL_TRANSITION',
          `task ${taskId} has already ${task.status === 'cancelled' ? 'been cancelled' : task.status}`,
          {
            details: { status: task.status },
          },
        );
      }
      if (task.status === 'running') {
        if (this.runner.cancel(taskId, actor)) return this.afterRun(taskId);
        await this.store.requestControl(taskId, 'cancel');
        // Nobody holds the lease (its worker died): take it and cancel here.
        const ended = await this.track(taskId, this.runner.runTask(taskId));
        return this.viewOf(ended ?? (await this.mustGet(taskId)));
      }
      const message = `cancelled by ${actor}${options.reason ? `: ${options.reason}` : ''}`;
      const cancelled = await this.apply(
        task,
        {
          patch: { status: 'cancelled', error: { code: 'CANCELLED', message }, wakeAt: null },
          append: [{ type: 'control', data: { action: 'cancel', actor, reason: options.reason ?? '' } }],
        },
        tries,
        actor,
      );
      if (cancelled) return cancelled;
    }
  }

  decide(
    taskId: string,
    decisions: readonly ApprovalDecision[],
    options: ActorOptions = {},
  ): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    return this.onPaused(taskId, actor, (task, journal) => decideApprovals(task, journal, decisions, actor));
  }

  provideInput(taskId: string, name: string, value: unknown, options: ActorOptions = {}): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    return this.onPaused(taskId, actor, (task, journal) => provideInput(task, journal, name, value, actor));
  }

  resolveAttention(
    taskId: string,
    decision: AttentionDecision,
    options: ActorOptions = {},
  ): Promise<TaskView> {
    const withReason = options.reason === undefined ? decision : { reason: options.reason, ...decision };
    const actor = options.actor ?? 'api';
    return this.onPaused(taskId, actor, (task, journal) =>
      resolveAttention(task, journal, withReason, actor),
    );
  }

  subscribe(taskId: string, listener: (event: RuntimeEvent) => void): () => void {
    return this.events.subscribe(taskId, listener);
  }

  liveLogs(taskId: string): readonly LogEntry[] {
    return this.live.of(taskId);
  }

  start(): void {
    this.assertOpen();
    this.assertCanRun();
    if (this.started) return;
    this.started = true;
    this.timer = setInterval(() => this.kick(true), this.pollMs);
    // Tasks paused by a graceful shutdown go on by themselves when a runtime starts again.
    resumeAfterShutdown(
      this.store,
      (task, action) => this.apply(task, action, 99),
      () => this.closed,
    ).then(
      () => this.kick(true),
      () => this.kick(true),
    );
  }

  async close(options: { pauseRunning?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.filling;
    if (options.pauseRunning) this.runner.shutdown();
    const ended = Promise.allSettled([...this.runs.values()]);
    if (options.timeoutMs === undefined) {
      await ended;
      return;
    }
    // Tasks still running at the deadline pause (`shutdown`) and resume on the next start.
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      ended.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), options.timeoutMs))),
    ]);
    clearTimeout(timer);
    if (late) {
      this.runner.shutdown();
      await ended;
    }
  }

  // ---- internals ----

  private observed(taskId: string, action: 'pause' | 'resume', done: Promise<TaskView>): Promise<TaskView> {
    try {
      this.observer?.controlRequested?.(taskId, action, done);
    } catch {
      // An observer's failure is its own.
    }
    return done;
  }

  /** Applies a human's action to a paused task in one transaction, then lets it run (here, when started). */
  private async onPaused(
    taskId: string,
    actor: string,
    build: (task: TaskRecord, journal: Awaited<ReturnType<TaskStore['readJournal']>>) => PausedAction,
  ): Promise<TaskView> {
    for (let tries = 0; ; tries++) {
      const task = await this.mustGet(taskId);
      const action = build(task, await this.store.readJournal(taskId));
      const view = await this.apply(task, action, tries, actor);
      if (view) {
        this.kick();
        return view;
      }
    }
  }

  /** Null when the task changed meanwhile (try again with a fresh read); gives up after a few tries. */
  private async apply(
    task: TaskRecord,
    action: PausedAction,
    tries: number,
    actor?: string,
  ): Promise<TaskView | null> {
    try {
      const updated = await this.store.updateTask(task.id, action.patch, {
        expectedVersion: task.version,
        append: action.append,
        ...(actor === undefined ? {} : { actor }),
      });
      if (updated.status !== task.status) {
        this.events.emit({
          type: 'status',
          taskId: task.id,
          status: updated.status,
          pauseReason: updated.pauseReason,
        });
      }
      return this.viewOf(updated);
    } catch (e) {
      if (isCodecallError(e) && e.code === 'VERSION_CONFLICT' && tries < 5) return null;
      throw e;
    }
  }

  private async afterRun(taskId: string): Promise<TaskView> {
    await this.runs.get(taskId);
    return this.viewOf(await this.mustGet(taskId));
  }

  private track(taskId: string, run: Promise<TaskRecord | null>): Promise<TaskRecord | null> {
    this.runs.set(taskId, run);
    const forget = (): void => {
      if (this.runs.get(taskId) === run) this.runs.delete(taskId);
      this.kick();
    };
    run.then(forget, forget);
    return run;
  }

  /** Fills free slots with runnable tasks; with `sweep`, first wakes paused tasks whose input wait timed out. */
  private kick(sweep = false): void {
    if (!this.started || this.closed) return;
    if (this.filling) return;
    const fill = async (): Promise<void> => {
      try {
        if (sweep) {
          const apply: ApplyAction = (task, action) => this.apply(task, action, 99);
          await failPastDeadline(this.store, this.clock, apply);
          await wakeDue(this.store, this.clock, apply);
        }
        while (!this.closed && this.runs.size < this.concurrency) {
          // Checked again once the sandboxes are ready: a runtime closed meanwhile claims nothing.
          const next = await this.runner.startNext({ shouldClaim: () => !this.closed });
          if (!next) break;
          this.track(next.taskId, next.done).catch(() => undefined);
        }
      } catch {
        // A busy or closing store: the next poll tries again.
      }
    };
    // Cleared in a callback, never inside fill(): a fill with every slot taken ends synchronously, and clearing
    // there would run before the assignment, leaving `filling` set for good (no task would be claimed again).
    const filling = fill().finally(() => {
      if (this.filling === filling) this.filling = undefined;
    });
    this.filling = filling;
  }

  /** A task whose journal is damaged is still shown (failed, CHECKPOINT_CORRUPT), without the journal's parts. */
  private async viewOf(record: TaskRecord): Promise<TaskView> {
    try {
      const artifacts = isArtifactStore(this.store) ? await this.store.listArtifacts(record.id) : undefined;
      return taskView(record, await this.store.readJournal(record.id), artifacts);
    } catch (e) {
      if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return taskView(record);
      throw e;
    }
  }

  private async mustGet(taskId: string): Promise<TaskRecord> {
    const task = await this.store.getTask(taskId);
    if (!task) throw new CodecallError('NOT_FOUND', `no task ${taskId}`, { details: { task_id: taskId } });
    return task;
  }

  private assertCanRun(): void {
    if (this.drivers.length === 0) {
      throw new CodecallError('INVALID_CONFIG', 'this runtime has no sandbox driver, so it cannot run tasks');
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new CodecallError('STORE_CLOSED', 'the runtime is closed');
  }
}
