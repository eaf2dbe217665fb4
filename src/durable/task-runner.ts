import { DEFAULT_PAUSED_VM_BUDGET_BYTES, PausedVms } from './paused-vms.ts';
import { traceRun } from '../telemetry/index.ts';
import type { RunTrace } from '../telemetry/index.ts';
import { CodecallError } from '../errors/index.ts';
import {
  EGRESS_NAMESPACE,
  OPEN_APPROVAL_RULES,
  hasToolLimits,
  idempotencyScope,
  isBodyStore,
  isTerminal,
  isUsageStore,
  limitsOfCall,
  readJournalPaged,
  taskBodies,
} from '../spec/index.ts';
import type {
  JournalEntryInput,
  Lease,
  LogEntry,
  SandboxDriver,
  TaskRecord,
  TenantToolLimits,
  ToolLimitsOfCall,
} from '../spec/index.ts';
import { REPLAY_ENTRIES } from '../spec/index.ts';
import { DEFAULT_MAX_STALLED_ATTEMPTS } from './crash-loop.ts';
import { INPUT_WAIT_BINDING } from './input-wait.ts';
import { runTools } from './run-tools.ts';
import { TenantLimitGate } from './tenant-limit-gate.ts';
import { decideApprovals } from './paused-actions.ts';
import { assertMayDecide } from './approver-check.ts';
import {
  armDeadline,
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_TOOL_UNAVAILABLE_BASE_MS,
  DEFAULT_TOOL_UNAVAILABLE_RETRIES,
  retryDelay,
  unavailableDelay,
} from './retry-and-deadline.ts';
import { runSetup } from './run-setup.ts';
import { settleRun } from './settle-run.ts';
import { prepareRun, toolsOfJournal } from './pre-run-checks.ts';
import type { PreRunEnv } from './pre-run-checks.ts';
import { programRequest, programRunner } from './program-runner.ts';
import { TaskRun } from './task-run.ts';
import { ControlWatch } from './control-watch.ts';
import type { ApprovalDecision, RuntimeEvent } from '../api/index.ts';
import type { TaskRunnerOptions } from './task-runner-options.ts';

export const DEFAULT_LEASE_MS = 15_000;
export type { TaskRunnerOptions } from './task-runner-options.ts';

/**
 * Claims tasks from the store and runs them through the journal: a first run journals as it goes, a resumed or
 * recovered task replays its journal and continues. Pause and cancel interrupt the sandbox at once (also when
 * asked from another process, through the store); a paused task holds no lease and no running VM (its paused VM
 * may be kept in memory, within a byte budget, to resume from: ADR 0056).
 */
export class TaskRunner {
  /** The runs in progress here, by task id. */
  private readonly runs = new Map<string, TaskRun>();
  private readonly leaseMs: number;
  private readonly maxStalledAttempts: number;
  private readonly clock: () => number;
  private readonly drivers: readonly SandboxDriver[];
  private readonly control: ControlWatch;
  private ready: Promise<unknown> | undefined;
  /** Paused VMs to resume from (ADR 0056); null when the budget is 0. */
  readonly pausedVms: PausedVms | null;

  constructor(private readonly options: TaskRunnerOptions) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxStalledAttempts = options.maxStalledAttempts ?? DEFAULT_MAX_STALLED_ATTEMPTS;
    this.clock = options.clock ?? Date.now;
    const budget = options.pausedVmBudgetBytes ?? DEFAULT_PAUSED_VM_BUDGET_BYTES;
    this.pausedVms = budget > 0 ? new PausedVms(budget, options.onPausedVm) : null;
    // Without drivers a runner can still settle requests (a cancel of a task whose worker died), not run code.
    this.drivers = options.drivers ?? (options.driver ? [options.driver] : []);
    for (const [reserved, what] of [
      [INPUT_WAIT_BINDING.namespace, 'input.wait'],
      [EGRESS_NAMESPACE, 'fetch'],
    ] as const) {
      if (options.tools.bindings.some((b) => b.namespace === reserved)) {
        throw new CodecallError(
          'INVALID_CONFIG',
          `the namespace "${reserved}" is reserved for ${what}; rename the tool's namespace`,
        );
      }
    }
    if (hasToolLimits(options.tenantLimits) && !isUsageStore(options.store)) {
      throw new CodecallError(
        'INVALID_CONFIG',
        'tool rate limits and quotas need a store that keeps usage (takeUsage): the SQLite or PostgreSQL store',
      );
    }
    this.control = new ControlWatch({
      store: options.store,
      owner: options.owner,
      pollMs: options.controlPollMs,
      has: (taskId) => this.runs.has(taskId),
      running: () => this.runs.size,
      act: (taskId, action) => (action === 'cancel' ? this.cancel(taskId) : this.pause(taskId)),
    });
  }

  /** Tasks running in this runner now. */
  get active(): number {
    return this.runs.size;
  }

  has(taskId: string): boolean {
    return this.runs.has(taskId);
  }

  /** Claims the next runnable task and runs it until it ends or pauses; null when there was none. */
  async runNext(): Promise<TaskRecord | null> {
    await this.driversReady();
    const lease = await this.options.store.claimTask(this.options.owner, this.claimOptions());
    return lease ? this.run(lease) : null;
  }

  /** Claims the next runnable task and starts it; `done` settles when it ends or pauses. Null when none. */
  async startNext(
    options: { shouldClaim?: () => boolean } = {},
  ): Promise<{ taskId: string; done: Promise<TaskRecord> } | null> {
    await this.driversReady();
    if (options.shouldClaim && !options.shouldClaim()) return null;
    const lease = await this.options.store.claimTask(this.options.owner, this.claimOptions());
    return lease ? { taskId: lease.taskId, done: this.run(lease) } : null;
  }

  /**
   * Claims this task (if it is runnable) and runs it until it ends or pauses; null when it was not claimable. An
   * abort of `signal` pauses the run (PAUSED, by `actor`) whenever it comes: before the claim, the task is not
   * claimed (null); once claimed, the run stops at once, even before its program has started.
   */
  async runTask(
    taskId: string,
    options: { signal?: AbortSignal | undefined; actor?: string } = {},
  ): Promise<TaskRecord | null> {
    await this.driversReady();
    if (options.signal?.aborted) return null;
    const lease = await this.options.store.claimTask(this.options.owner, { leaseMs: this.leaseMs, taskId });
    return lease ? this.run(lease, options) : null;
  }

  /**
   * Records decisions on a task paused for approval (each bound to the exact call it was asked for) and runs it
   * on: approved calls run, rejected ones raise a catchable ToolRejectedError in the guest.
   */
  async decide(
    taskId: string,
    decisions: readonly ApprovalDecision[],
    actor: string,
  ): Promise<TaskRecord | null> {
    const { store } = this.options;
    const task = await store.getTask(taskId);
    if (!task) throw new CodecallError('NOT_FOUND', `no task ${taskId}`);
    const action = decideApprovals(
      task,
      await readJournalPaged(store, taskId),
      decisions,
      actor,
      this.clock(),
    );
    // No operator rules here (a runner alone has none), but each request's own still hold.
    await assertMayDecide(store, OPEN_APPROVAL_RULES, { actor }, taskId, action.decided);
    await store.updateTask(taskId, action.patch, {
      expectedVersion: task.version,
      append: action.append,
      actor,
    });
    return this.runTask(taskId);
  }

  private claimOptions(): {
    leaseMs: number;
    now: number;
    maxPerTenant?: number;
    tenantShare?: number;
    tenantReserve?: number;
    maxRunning?: number;
  } {
    const { maxPerTenant, tenantShare, tenantReserve, maxRunning } = this.options;
    return {
      leaseMs: this.leaseMs,
      now: this.clock(),
      ...(maxPerTenant === undefined ? {} : { maxPerTenant }),
      ...(tenantShare === undefined ? {} : { tenantShare }),
      ...(tenantReserve === undefined ? {} : { tenantReserve }),
      ...(maxRunning === undefined ? {} : { maxRunning }),
    };
  }

  /**
   * Claims wait until the sandboxes can run: a worker that dies while still starting must not have taken a lease
   * (and counted a stalled run towards CRASH_LOOP) for a task it never began. A driver that cannot start (the
   * Python sandbox where bubblewrap refuses) holds back no claim: its tasks fail at their execution with its
   * error, the others run (a rejection here failed every claim, silently, for good). The log is told once.
   */
  private driversReady(): Promise<unknown> {
    this.ready ??= Promise.allSettled(this.drivers.map((d) => d.ready())).then((settled) => {
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') return;
        const why = s.reason instanceof Error ? s.reason.message : String(s.reason);
        this.options.log?.(`the ${this.drivers[i]?.name ?? 'sandbox'} sandbox did not get ready: ${why}`);
      });
    });
    return this.ready;
  }

  /** Interrupts a task running here; it ends `paused` (user_request). */
  pause(taskId: string, actor?: string): boolean {
    return this.interrupt(taskId, new CodecallError('PAUSED', 'paused by request'), actor);
  }

  /** Interrupts a task running here; it ends `cancelled`. */
  cancel(taskId: string, actor?: string): boolean {
    return this.interrupt(taskId, new CodecallError('CANCELLED', 'cancelled by request'), actor);
  }

  /**
   * Interrupts every task running here; they end `paused` (shutdown) and resume on the next start. Their calls
   * already running go on to their outcomes, unless `stopCalls` (a shutdown past its time).
   */
  shutdown(options: { stopCalls?: boolean } = {}): void {
    const reason = new CodecallError('SHUTDOWN', 'paused for shutdown');
    for (const run of this.runs.values()) {
      if (options.stopCalls) run.stopCalls(reason);
      else run.interrupt(reason);
    }
  }

  private interrupt(taskId: string, reason: CodecallError, actor?: string): boolean {
    const run = this.runs.get(taskId);
    if (!run) return false;
    run.interrupt(reason, actor);
    return true;
  }

  /** Drops what is kept of an ended task's paused VM at once (its resume never comes). */
  forget(taskId: string): void {
    this.pausedVms?.drop(idempotencyScope(taskId, 0));
  }

  private emit(event: RuntimeEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener's failure is its own; the task goes on.
    }
  }

  private async run(
    lease: Lease,
    stop: { signal?: AbortSignal | undefined; actor?: string } = {},
  ): Promise<TaskRecord> {
    const onLog = this.logSink(lease.taskId);
    const run = new TaskRun(lease, {
      store: this.options.store,
      leaseMs: this.leaseMs,
      ...(this.options.onEvent ? { emit: (event: RuntimeEvent) => this.emit(event) } : {}),
      ...(onLog ? { onLog } : {}),
      ...(this.options.journalLimits ? { journalLimits: this.options.journalLimits } : {}),
      onLeaseLost: (reason) =>
        this.options.log?.(
          `task ${lease.taskId}: lost its lease (${reason.message}); this worker stops it and starts no more of its tool calls (another worker recovers it)`,
        ),
    });
    this.runs.set(lease.taskId, run);
    // A stop asked while the claim was under way (before the run was known here) is not lost.
    const onStop = (): void => run.interrupt(new CodecallError('PAUSED', 'paused by request'), stop.actor);
    if (stop.signal?.aborted) onStop();
    else stop.signal?.addEventListener('abort', onStop, { once: true });
    this.control.start();
    this.emit({ type: 'status', taskId: lease.taskId, status: 'running', pauseReason: null });
    run.keepLease();
    try {
      const ended = await this.runClaimed(run).catch((e: unknown) => this.failOverJournal(run, e));
      if (isTerminal(ended.status)) this.forget(ended.id);
      this.emit({
        type: 'status',
        taskId: ended.id,
        status: ended.status,
        pauseReason: ended.pauseReason,
      });
      return ended;
    } finally {
      stop.signal?.removeEventListener('abort', onStop);
      this.runs.delete(lease.taskId);
      await run.release();
    }
  }

  /**
   * A journal already at its bound refuses the entries a run journals before its program starts (its clock, a
   * manifest): the task fails with JOURNAL_LIMIT rather than being claimed again and again. Other errors go on.
   */
  private failOverJournal(run: TaskRun, e: unknown): Promise<TaskRecord> {
    if (!(e instanceof CodecallError) || e.code !== 'JOURNAL_LIMIT') throw e;
    return this.options.store.updateTask(run.taskId, { status: 'failed', error: e.toJSON() }, run.fenced);
  }

  private async runClaimed(run: TaskRun): Promise<TaskRecord> {
    const task = await this.options.store.getTask(run.taskId);
    if (!task) throw new CodecallError('NOT_FOUND', `task ${run.taskId} vanished`);
    // The run's span: under its caller's trace, linked to the earlier runs' (ADR 0053).
    return traceRun(task, async (trace) => {
      const ended = await this.runTraced(run, task, trace);
      // Inside the run's context: a structured log names the task, its trace and the run's span.
      const why = ended.pauseReason === null ? '' : ` (${ended.pauseReason})`;
      this.options.debugLog?.(`task ${task.id}: the run ended ${ended.status}${why}`);
      return ended;
    });
  }

  private async runTraced(run: TaskRun, task: TaskRecord, trace: RunTrace): Promise<TaskRecord> {
    const { store, agent } = this.options;
    const prepared = await prepareRun(task, {
      store,
      run,
      drivers: this.drivers,
      tools: this.options.tools,
      forManifest: (hash) => this.options.tools.forManifest?.(hash),
      agent,
      acceptChangedTools: this.options.acceptChangedTools === true,
      maxStalledAttempts: this.maxStalledAttempts,
      clock: this.clock,
      ...this.keptJournalOf(task),
    });
    if (prepared.kind === 'settled') return prepared.task;
    if (prepared.kind === 'fail') {
      return store.updateTask(run.taskId, { status: 'failed', error: prepared.error.toJSON() }, run.fenced);
    }
    const { journal, driver, language, codeHash } = prepared;
    trace.linkEarlier(journal);
    // A task begun before its tools changed (an MCP server's list) keeps the tools it began with.
    const served = toolsOfJournal(journal, this.options.tools, (hash) =>
      this.options.tools.forManifest?.(hash),
    );
    const { input } = task;
    // The attempt comes last: whatever this run journals after it is progress (crash-loop.ts).
    const begun = await runSetup(store, task, journal, { served, clock: this.clock, codeHash });
    if (begun instanceof CodecallError) {
      return store.updateTask(run.taskId, { status: 'failed', error: begun.toJSON() }, run.fenced);
    }
    const { setup, startClock, revision } = begun;
    const committing = run.append([...setup, ...trace.stamp(prepared.journalBefore)]);
    // A kept paused VM is restored while the attempt commits: no call is decided before it is (ADR 0056).
    const overlap = input.kind === 'code' && this.pausedVms?.has(idempotencyScope(run.taskId, 0)) === true;
    if (overlap) committing.catch((e: unknown) => run.abort(e));
    else await committing;
    // Whether a pause must look for input deadlines (settleRun reads the journal again only then).
    run.observe(journal);
    const made = runTools(task, journal, {
      tools: served,
      // Read per run: the tools may change between runs (an MCP server's list).
      bindings: [...served.bindings, INPUT_WAIT_BINDING],
      egress: this.options.egress,
      egressPolicies: this.options.egressPolicies,
      egressDefaults: this.options.egressDefaults,
      egressMaxRequests: this.options.egressMaxRequests,
      budgetCeilings: this.options.budgetCeilings,
      tenantBudgetCeilings: this.options.tenantBudgetCeilings,
      maxResultBytes: this.options.sizes?.maxToolResultBytes,
      bodies: isBodyStore(store) ? taskBodies(store, task.id) : undefined,
    });
    if ('error' in made)
      return store.updateTask(run.taskId, { status: 'failed', error: made.error }, run.fenced);
    const { tools, bindings, budgets } = made;
    const tenantLimits = this.tenantLimitsOf(task);
    const runProgram = programRunner({
      driver,
      tools,
      ...(budgets ? { budgets } : {}),
      ...(tenantLimits ? { tenantLimits } : {}),
      request: programRequest(input, bindings),
      ...(run.onLog ? { onLog: run.onLog } : {}),
      startClock,
      clock: this.clock,
      signal: run.signal,
      toolSignal: run.toolSignal,
      lease: { fencingToken: run.lease.fencingToken, prove: () => run.proveLease() },
      ...(this.options.sizes ? { sizes: this.options.sizes } : {}),
      approvalTtlSeconds: this.options.approvalTtlSeconds ?? null,
      ...(input.traceContext ? { traceContext: input.traceContext } : {}),
      ...(this.pausedVms ? { pausedVms: this.pausedVms } : {}),
      ...(overlap ? { ready: committing } : {}),
    });
    const append = async (entries: readonly JournalEntryInput[]): Promise<void> =>
      void (await run.append(entries));
    // The deadline interrupts the run like a cancel; the task fails with DEADLINE_EXCEEDED.
    const disarm = armDeadline(task, run, this.clock);
    const result = await (
      input.kind === 'code' || !agent
        ? runProgram({
            code: input.kind === 'code' ? input.code : '',
            language,
            recorded: journal.filter((e) => REPLAY_ENTRIES.has(e.type)),
            // What it stored lets a paused VM be kept against the journal (ADR 0056).
            append: (entries) => run.append(entries),
            keyPrefix: idempotencyScope(run.taskId, 0),
            ...(revision ? { carry: revision.carry } : {}),
          })
        : agent.run({
            task: { ...task, input },
            journal,
            append,
            runProgram,
            ...(run.onLog ? { onLog: run.onLog } : {}),
            signal: run.signal,
            clock: this.clock,
            ...(tenantLimits && this.options.tenantLimits
              ? { limitsOf: limitsOfTenant(this.options.tenantLimits, task.tenant) }
              : {}),
            // The prompt lists what the programs can call: the task's own tool set.
            ...(served.definitions ? { tools: served.definitions } : {}),
          })
    ).finally(disarm);
    // The attempt is committed before anything is settled (a failure to commit it ends the run with its error).
    await committing;
    // A paused VM was kept: the journal up to its mark is kept with it, so its resume reads only what follows.
    if (input.kind === 'code')
      this.pausedVms?.keepJournal(idempotencyScope(run.taskId, 0), (seq) => run.journalThrough(seq));
    return settleRun({
      store,
      lease: run.lease,
      task,
      result,
      ...run.ending,
      retryDelayMs: (retries) => retryDelay(retries, this.options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS),
      unavailable: {
        retries: this.options.toolUnavailableRetries ?? DEFAULT_TOOL_UNAVAILABLE_RETRIES,
        delayMs: (n) =>
          unavailableDelay(n, this.options.toolUnavailableRetryBaseMs ?? DEFAULT_TOOL_UNAVAILABLE_BASE_MS),
      },
      clock: this.clock,
    });
  }

  /** The journal kept with a code task's paused VM, for its resume to read only the entries after it. */
  private keptJournalOf(
    task: TaskRecord,
  ): Pick<PreRunEnv, 'keptJournal' | 'onJournalRead' | 'trackJournalBytes'> {
    const kept = this.pausedVms;
    if (!kept || task.input.kind !== 'code') return {};
    return {
      keptJournal: kept.journalOf(idempotencyScope(task.id, 0)),
      trackJournalBytes: kept.budgetBytes,
      onJournalRead: (read) => {
        if (read === 'tail') kept.counts.tailReads += 1;
        else if (read === 'moved') kept.counts.tailMoved += 1;
      },
    };
  }

  /** The gate of the task's tenant's limits on tool calls, or null when none is configured (ADR 0045). */
  private tenantLimitsOf(task: TaskRecord): TenantLimitGate | null {
    const { tenantLimits: limits, store } = this.options;
    if (!hasToolLimits(limits) || !isUsageStore(store)) return null;
    return new TenantLimitGate({ store, tenant: task.tenant, limits, clock: this.clock });
  }

  private logSink(taskId: string): ((entry: LogEntry) => void) | undefined {
    const { onLog, onEvent } = this.options;
    if (!onLog && !onEvent) return undefined;
    return (entry) => {
      onLog?.(entry);
      if (onEvent) this.emit({ type: 'log', taskId, level: entry.level, message: entry.message });
    };
  }
}

/** The rules a tenant's calls of each tool are under, for an agent's prompt (ADR 0045). */
function limitsOfTenant(limits: TenantToolLimits, tenant: string): (tool: string) => ToolLimitsOfCall | null {
  return (tool) => limitsOfCall(limits, tenant, tool);
}
