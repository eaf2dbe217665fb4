import { CodecallError } from '../errors/index.ts';
import type {
  ApprovalRules,
  LogEntry,
  NewTaskAttributes,
  SandboxDriver,
  TaskInput,
  TaskRecord,
  TaskStore,
} from '../spec/index.ts';
import {
  OPEN_APPROVAL_RULES,
  intervalMs,
  isTerminal,
  parseToolQuotas,
  parseToolRateLimits,
} from '../spec/index.ts';
import type { RuntimeOptions } from './runtime-types.ts';
import { EventHub } from './event-hub.ts';
import { LiveLogs } from './live-logs.ts';
import { RuntimeControl } from './runtime-control.ts';
import { Scheduler } from './runtime-scheduler.ts';
import { RuntimeViews } from './runtime-views.ts';
import { budgetCeilingsOf, checkCeilings } from './limit-ceilings.ts';
import { checkLiveTasks } from './live-task-cap.ts';
import type { LimitCeilings } from './limit-ceilings.ts';
import { checkedCallbackUrl, toBatchTasks, toTaskAttributes, toTaskInput } from './submit-input.ts';
import { batchView } from './batch-view.ts';
import { revisionOf } from './revise-task.ts';
import { TaskRunner } from './task-runner.ts';
import { describeLeaseOwner, leaseOwnerGone, newLeaseOwner } from './lease-owner.ts';
import { approvalInbox } from './approval-inbox.ts';
import type {
  ActorOptions,
  ApprovalDecision,
  ApprovalInbox,
  AttentionDecision,
  DeciderOptions,
  BatchView,
  CorruptTaskItem,
  CreateOptions,
  ReviseInput,
  ListFilter,
  Runtime,
  RuntimeLoopFault,
  RuntimeEvent,
  SubmitInput,
  TaskListItem,
  TaskView,
} from '../api/index.ts';

export const DEFAULT_CONCURRENCY = 4;
/** How often a started runtime looks for work it was not told about (other processes, expired leases, wake-ups). */
export const DEFAULT_POLL_MS = 250;

/** The durable runtime: submit tasks, run them through the journal, steer them, watch them. */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new DurableRuntime(options);
}

/**
 * Why `run` could not claim a task: it has ended or waits for a human, or it runs here already or in another
 * worker, whose lease (who holds it, until when) the message and `details` name.
 */
function notClaimed(task: TaskRecord, here: boolean, now: number): CodecallError {
  const { lease } = task;
  let where = '';
  if (task.status === 'running') {
    where = here ? ' here already' : ' in another worker';
    if (!here && lease !== undefined && lease.expiresAt !== null) {
      const seconds = Math.max(0, Math.ceil((lease.expiresAt - now) / 1000));
      where += `; ${describeLeaseOwner(lease.owner)} holds its lease until ${new Date(lease.expiresAt).toISOString()} (in ${seconds} s)`;
    }
  }
  return new CodecallError(
    'ILLEGAL_TRANSITION',
    `task ${task.id} could not be claimed (it is ${task.status}${where})`,
    {
      details: {
        status: task.status,
        pause_reason: task.pauseReason,
        ...(lease && !here ? { lease_owner: lease.owner, lease_expires_at: lease.expiresAt } : {}),
      },
    },
  );
}

/** Composes the parts: the runner runs, the scheduler fills slots, control steers, views read, events tell. */
class DurableRuntime implements Runtime {
  private readonly store: TaskStore;
  private readonly drivers: readonly SandboxDriver[];
  private readonly pollMs: number;
  private readonly events = new EventHub<RuntimeEvent>();
  private readonly live = new LiveLogs();
  private readonly views: RuntimeViews;
  private readonly runner: TaskRunner;
  private readonly scheduler: Scheduler;
  private readonly control: RuntimeControl;
  private readonly clock: () => number;
  private readonly ceilings: LimitCeilings;
  private readonly approvalRules: ApprovalRules;
  private readonly agent: RuntimeOptions['agent'];

  constructor(options: RuntimeOptions) {
    this.store = options.store;
    this.agent = options.agent;
    this.drivers = options.drivers;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    const clock = options.clock ?? Date.now;
    this.clock = clock;
    this.ceilings = options.ceilings ?? {};
    this.approvalRules = options.approvals ?? OPEN_APPROVAL_RULES;
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.views = new RuntimeViews(options.store);
    const budgetCeilings = budgetCeilingsOf(this.ceilings);
    this.runner = new TaskRunner({
      store: options.store,
      drivers: options.drivers,
      tools: options.tools,
      owner: options.owner ?? newLeaseOwner(),
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(options.acceptChangedTools === undefined ? {} : { acceptChangedTools: options.acceptChangedTools }),
      ...(options.maxStalledAttempts === undefined ? {} : { maxStalledAttempts: options.maxStalledAttempts }),
      ...(options.tenantConcurrency === undefined ? {} : { maxPerTenant: options.tenantConcurrency }),
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      ...(options.tenantReserve === undefined ? {} : { tenantReserve: options.tenantReserve }),
      // The bound holds over every runtime on the store; the scheduler also keeps this one's runs within it.
      maxRunning: concurrency,
      ...(options.retryBaseMs === undefined ? {} : { retryBaseMs: options.retryBaseMs }),
      ...(options.toolUnavailableRetries === undefined
        ? {}
        : { toolUnavailableRetries: options.toolUnavailableRetries }),
      ...(options.toolUnavailableRetryBaseMs === undefined
        ? {}
        : { toolUnavailableRetryBaseMs: options.toolUnavailableRetryBaseMs }),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(options.debugLog === undefined ? {} : { debugLog: options.debugLog }),
      ...(options.sizes === undefined ? {} : { sizes: options.sizes }),
      ...(options.journalLimits === undefined ? {} : { journalLimits: options.journalLimits }),
      ...(options.pausedVmBudgetBytes === undefined
        ? {}
        : { pausedVmBudgetBytes: options.pausedVmBudgetBytes }),
      ...(options.egress === undefined ? {} : { egress: options.egress }),
      ...(options.egressMaxRequests === undefined ? {} : { egressMaxRequests: options.egressMaxRequests }),
      ...(options.egressPolicies === undefined ? {} : { egressPolicies: options.egressPolicies }),
      ...(options.egressDefaults === undefined ? {} : { egressDefaults: options.egressDefaults }),
      ...(budgetCeilings === undefined ? {} : { budgetCeilings }),
      ...(this.ceilings.tenantBudgetCeilings === undefined
        ? {}
        : { tenantBudgetCeilings: this.ceilings.tenantBudgetCeilings }),
      approvalTtlSeconds: options.approvals?.ttlSeconds ?? null,
      tenantLimits: {
        rateLimits: parseToolRateLimits(options.toolRateLimits),
        quotas: parseToolQuotas(options.toolQuotas),
      },
      clock,
      onEvent: (event) => this.events.emit(event),
      ...(options.observer?.pausedVm ? { onPausedVm: options.observer.pausedVm } : {}),
    });
    this.scheduler = new Scheduler({
      store: options.store,
      runner: this.runner,
      concurrency,
      pollMs: this.pollMs,
      clock,
      apply: (task, action) => this.control.apply(task, action),
      ownerGone: leaseOwnerGone,
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    this.control = new RuntimeControl({
      store: options.store,
      runner: this.runner,
      scheduler: this.scheduler,
      views: this.views,
      emit: (event) => this.events.emit(event),
      ...(options.observer ? { observer: options.observer } : {}),
      approvals: this.approvalRules,
      clock,
    });
    this.events.subscribe('*', (event) => {
      this.live.observe(event);
      // A paused task cancelled (here, or by this runtime's control) keeps no paused VM: its resume never comes.
      if (event.type === 'status' && isTerminal(event.status)) this.runner.forget(event.taskId);
    });
  }

  async submit(input: SubmitInput, options: CreateOptions = {}): Promise<TaskView> {
    this.assertOpen();
    const now = this.clock();
    checkCeilings(input, this.ceilings, now);
    await checkLiveTasks(this.store, input.tenant ?? 'default', 1, this.ceilings.maxLiveTasksPerTenant);
    const task = toTaskInput(input);
    this.checkAnswerSchema(input);
    return this.create(task, toTaskAttributes(input, now), {
      ...options,
      ...(input.id === undefined ? {} : { id: input.id }),
    });
  }

  /** The agent's check of an answer schema (that it compiles), at submit; its shape was checked before. */
  private checkAnswerSchema(input: SubmitInput): void {
    const schema = input.answerSchema;
    if (
      input.instruction === undefined ||
      typeof schema !== 'object' ||
      schema === null ||
      Array.isArray(schema)
    )
      return;
    this.agent?.checkAnswerSchema?.(schema);
  }

  async revise(taskId: string, input: ReviseInput, options: CreateOptions = {}): Promise<TaskView> {
    this.assertOpen();
    const source = await this.views.mustGet(taskId);
    const revision = revisionOf(source, input, (i) => checkCeilings(i, this.ceilings, this.clock()));
    await checkLiveTasks(
      this.store,
      revision.attributes.tenant ?? 'default',
      1,
      this.ceilings.maxLiveTasksPerTenant,
    );
    return this.create(revision.input, revision.attributes, options);
  }

  /** Stores a new task (pending), tells its subscribers and the scheduler; its view. */
  private async create(
    input: TaskInput,
    attributes: NewTaskAttributes,
    options: CreateOptions & { id?: string },
  ): Promise<TaskView> {
    const record = await this.store.createTask(input, {
      attributes,
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(options.idempotency ? { idempotency: options.idempotency } : {}),
      ...(options.actor === undefined ? {} : { actor: options.actor }),
    });
    this.events.emit({ type: 'status', taskId: record.id, status: 'pending', pauseReason: null });
    this.scheduler.kick();
    return this.views.ofRecord(record);
  }

  async submitBatch(
    inputs: readonly SubmitInput[],
    options: { tenant?: string; callbackUrl?: string; actor?: string } = {},
  ): Promise<BatchView> {
    this.assertOpen();
    const now = this.clock();
    const tenant = options.tenant ?? 'default';
    await checkLiveTasks(this.store, tenant, inputs.length, this.ceilings.maxLiveTasksPerTenant);
    const { batch, tasks: records } = await this.store.createBatch(
      toBatchTasks(
        inputs,
        tenant,
        (i) => {
          checkCeilings(i, this.ceilings, now);
          this.checkAnswerSchema(i);
        },
        now,
      ),
      {
        tenant,
        callbackUrl: options.callbackUrl === undefined ? null : checkedCallbackUrl(options.callbackUrl),
        ...(options.actor === undefined ? {} : { actor: options.actor }),
      },
    );
    for (const r of records)
      this.events.emit({ type: 'status', taskId: r.id, status: 'pending', pauseReason: null });
    this.scheduler.kick();
    return batchView(batch);
  }

  async getBatch(batchId: string): Promise<BatchView | null> {
    const batch = await this.store.getBatch(batchId);
    return batch ? batchView(batch) : null;
  }

  get(taskId: string): Promise<TaskView | null> {
    return this.views.get(taskId);
  }

  async list(
    filter: ListFilter = {},
  ): Promise<{ tasks: TaskView[]; next_cursor: string | null; corrupt: CorruptTaskItem[] }> {
    const page = await this.store.listTasks(filter);
    return { ...(await this.views.page(page)), next_cursor: page.nextCursor };
  }

  view(record: TaskRecord): Promise<TaskView> {
    return this.views.listed(record);
  }

  async listItems(
    filter: ListFilter = {},
  ): Promise<{ tasks: TaskListItem[]; next_cursor: string | null; corrupt: CorruptTaskItem[] }> {
    const page = await this.store.listTasks({ ...filter, summarised: true });
    return { ...(await this.views.itemPage(page)), next_cursor: page.nextCursor };
  }

  listItem(record: TaskRecord): Promise<{ task: TaskListItem } | { corrupt: CorruptTaskItem }> {
    return this.views.item(record);
  }

  approvals(filter: Parameters<Runtime['approvals']>[0] = {}): Promise<ApprovalInbox> {
    const { decider, ...page } = filter;
    return approvalInbox(this.store, page, decider ? { decider, rules: this.approvalRules } : undefined);
  }

  async run(taskId: string, options: { signal?: AbortSignal } = {}): Promise<TaskView> {
    this.assertOpen();
    this.assertCanRun();
    const { signal } = options;
    // A task whose worker was a process of this machine that died is taken over now, not when its lease runs
    // out (fencing keeps a wrongly judged owner out, as for any lost lease).
    if (!this.runner.has(taskId)) await this.store.expireLeases(leaseOwnerGone).catch(() => undefined);
    const ended = await this.scheduler.track(
      taskId,
      this.runner.runTask(taskId, { signal, actor: 'signal' }),
    );
    if (ended) return this.views.of(ended);
    const current = await this.views.mustGet(taskId);
    if (signal?.aborted) {
      // Stopped before it was claimed: a queued task pauses (resumable); any other is left as it is.
      return current.status === 'pending'
        ? this.control.pause(taskId, { actor: 'signal' })
        : this.views.of(current);
    }
    throw notClaimed(current, this.runner.has(taskId), this.clock());
  }

  async wait(
    taskId: string,
    options: { until?: 'settled' | 'terminal'; signal?: AbortSignal } = {},
  ): Promise<TaskView> {
    const done = (r: TaskRecord): boolean =>
      isTerminal(r.status) || (options.until !== 'terminal' && r.status === 'paused');
    for (;;) {
      if (options.signal?.aborted) throw new CodecallError('ABORTED', 'stopped waiting');
      const record = await this.views.mustGet(taskId);
      if (done(record)) return this.views.of(record);
      await new Promise<void>((resolve) => {
        const { signal } = options;
        const timer = setTimeout(finish, intervalMs(this.pollMs));
        const off = this.subscribe(taskId, (e) => {
          if (e.type === 'status') finish();
        });
        signal?.addEventListener('abort', finish, { once: true });
        // Taken off each round: a long wait polls many times on one signal (`codecall mcp`'s 50 s execute
        // gathered a listener per poll: MaxListenersExceededWarning at the 11th).
        function finish(): void {
          clearTimeout(timer);
          off();
          signal?.removeEventListener('abort', finish);
          resolve();
        }
      });
    }
  }

  pause(taskId: string, options?: ActorOptions): Promise<TaskView> {
    return this.control.pause(taskId, options);
  }

  resume(taskId: string, options?: ActorOptions & { force?: boolean }): Promise<TaskView> {
    return this.control.resume(taskId, options);
  }

  cancel(taskId: string, options?: ActorOptions): Promise<TaskView> {
    return this.control.cancel(taskId, options);
  }

  decide(
    taskId: string,
    decisions: readonly ApprovalDecision[],
    options?: DeciderOptions,
  ): Promise<TaskView> {
    return this.control.decide(taskId, decisions, options);
  }

  provideInput(taskId: string, name: string, value: unknown, options?: ActorOptions): Promise<TaskView> {
    return this.control.provideInput(taskId, name, value, options);
  }

  resolveAttention(taskId: string, decision: AttentionDecision, options?: ActorOptions): Promise<TaskView> {
    return this.control.resolveAttention(taskId, decision, options);
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
    this.scheduler.start();
  }

  loopFault(): RuntimeLoopFault | null {
    return this.scheduler.fault();
  }

  close(options: { pauseRunning?: boolean; timeoutMs?: number } = {}): Promise<void> {
    return this.scheduler.close(options);
  }

  private assertCanRun(): void {
    if (this.drivers.length === 0) {
      throw new CodecallError('INVALID_CONFIG', 'this runtime has no sandbox driver, so it cannot run tasks');
    }
  }

  private assertOpen(): void {
    if (this.scheduler.closed) throw new CodecallError('STORE_CLOSED', 'the runtime is closed');
  }
}
