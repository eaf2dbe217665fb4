import { CodecallError, isCodecallError } from '../errors/index.ts';
import { idempotencyScope } from '../spec/index.ts';
import type {
  ExecutionHost,
  GuestToolBinding,
  JournalEntry,
  JournalEntryInput,
  Lease,
  LogEntry,
  SandboxDriver,
  SandboxPolicy,
  TaskConstraints,
  TaskRecord,
  TaskStore,
} from '../spec/index.ts';
import { DEFAULT_MAX_STALLED_ATTEMPTS, nextAttempt } from './crash-loop.ts';
import { checkTaskInput, codeHashOf } from './journal-state.ts';
import { INPUT_WAIT_BINDING } from './input-wait.ts';
import { decideApprovals } from './paused-actions.ts';
import type { ApprovalDecision } from './paused-actions.ts';
import type { RuntimeEvent } from './runtime-event.ts';
import { armDeadline, deadlineExceeded, DEFAULT_RETRY_BASE_MS, retryDelay } from './retry-and-deadline.ts';
import { settleRun } from './settle-run.ts';
import { checkManifest } from './manifest-check.ts';
import type { ManifestTools } from './tool-manifest.ts';
import type { TaskAgent } from './agent-hook.ts';
import { programRunner } from './program-runner.ts';

export const DEFAULT_LEASE_MS = 15_000;
/** How often a runner asks the store for pause/cancel requests made by other processes. */
export const DEFAULT_CONTROL_POLL_MS = 50;

/** The tools a runner serves (a ToolRegistry fits). */
export interface RunnerTools extends ManifestTools {
  readonly bindings: readonly GuestToolBinding[];
  /** `onLog` is passed only when the runner has one. */
  host(options?: { onLog?: (entry: LogEntry) => void }): ExecutionHost;
}

export interface TaskRunnerOptions {
  readonly store: TaskStore;
  /** One driver, or several: a task runs on the first that speaks its language. */
  readonly driver?: SandboxDriver;
  readonly drivers?: readonly SandboxDriver[];
  readonly tools: RunnerTools;
  /** Identifies this runner in leases. */
  readonly owner: string;
  readonly leaseMs?: number;
  /** Resume tasks whose journal was written with other tools or another engine (default: pause them). */
  readonly acceptChangedTools?: boolean;
  /** Runs in a row that may die without progress before the task fails with CRASH_LOOP. */
  readonly maxStalledAttempts?: number;
  readonly controlPollMs?: number;
  /** Tasks of one tenant running at once (over every runner on the store). */
  readonly maxPerTenant?: number;
  /** First backoff of an infrastructure retry. */
  readonly retryBaseMs?: number;
  readonly clock?: () => number;
  /** Receives the guest's console output (passed to `tools.host({ onLog })`). */
  readonly onLog?: (entry: LogEntry) => void;
  /** Status changes, log lines and journal entries of the tasks this runner runs. */
  readonly onEvent?: (event: RuntimeEvent) => void;
  /** Runs instruction tasks; without one they fail with MODEL_NOT_CONFIGURED. */
  readonly agent?: TaskAgent;
}

/** The sandbox's part of a task's constraints. */
function policyOf(c: TaskConstraints): SandboxPolicy {
  return {
    ...(c.allowedLibraries ? { allowedLibraries: c.allowedLibraries } : {}),
    ...(c.allowSubprocesses === undefined ? {} : { allowSubprocesses: c.allowSubprocesses }),
    ...(c.blockedCommands ? { blockedCommands: c.blockedCommands } : {}),
  };
}

/** The journal entries a replay needs. */
export const REPLAY_ENTRIES: ReadonlySet<string> = new Set([
  'tool_intent',
  'tool_outcome',
  'approval_request',
  'approval_decision',
  'input_request',
  'input_provided',
  'input_timeout',
  'attention_decision',
  'control',
]);

/**
 * Claims tasks from the store and runs them through the journal: a first run journals as it goes, a resumed or
 * recovered task replays its journal and continues. Pause and cancel interrupt the sandbox at once (also when
 * asked from another process, through the store); a paused task holds no VM and no lease.
 */
export class TaskRunner {
  private readonly running = new Map<string, AbortController>();
  private readonly actors = new Map<string, string>();
  /** Tasks running here that were asked to cancel. */
  private readonly cancels = new Set<string>();
  private readonly leaseMs: number;
  private readonly maxStalledAttempts: number;
  private readonly clock: () => number;
  private readonly drivers: readonly SandboxDriver[];
  private readonly bindings: readonly GuestToolBinding[];
  private controlPoll: NodeJS.Timeout | undefined;
  private ready: Promise<unknown> | undefined;

  constructor(private readonly options: TaskRunnerOptions) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxStalledAttempts = options.maxStalledAttempts ?? DEFAULT_MAX_STALLED_ATTEMPTS;
    this.clock = options.clock ?? Date.now;
    // Without drivers a runner can still settle requests (a cancel of a task whose worker died), not run code.
    this.drivers = options.drivers ?? (options.driver ? [options.driver] : []);
    if (options.tools.bindings.some((b) => b.namespace === INPUT_WAIT_BINDING.namespace)) {
      throw new CodecallError(
        'INVALID_CONFIG',
        `the namespace "${INPUT_WAIT_BINDING.namespace}" is reserved for input.wait; rename the tool's namespace`,
      );
    }
    this.bindings = [...options.tools.bindings, INPUT_WAIT_BINDING];
  }

  /** Tasks running in this runner now. */
  get active(): number {
    return this.running.size;
  }

  has(taskId: string): boolean {
    return this.running.has(taskId);
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

  /** Claims this task (if it is runnable) and runs it until it ends or pauses; null when it was not claimable. */
  async runTask(taskId: string): Promise<TaskRecord | null> {
    await this.driversReady();
    const lease = await this.options.store.claimTask(this.options.owner, { leaseMs: this.leaseMs, taskId });
    return lease ? this.run(lease) : null;
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
    const action = decideApprovals(task, await store.readJournal(taskId), decisions, actor);
    await store.updateTask(taskId, action.patch, {
      expectedVersion: task.version,
      append: action.append,
      actor,
    });
    return this.runTask(taskId);
  }

  private claimOptions(): { leaseMs: number; now: number; maxPerTenant?: number } {
    const cap = this.options.maxPerTenant;
    return { leaseMs: this.leaseMs, now: this.clock(), ...(cap === undefined ? {} : { maxPerTenant: cap }) };
  }

  /**
   * Claims wait until the sandboxes can run: a worker that dies while still starting must not have taken a lease
   * (and counted a stalled run towards CRASH_LOOP) for a task it never began.
   */
  private driversReady(): Promise<unknown> {
    this.ready ??= Promise.all(this.drivers.map((d) => d.ready()));
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

  /** Interrupts every task running here; they end `paused` (shutdown) and resume on the next start. */
  shutdown(): void {
    for (const id of this.running.keys()) {
      this.interrupt(id, new CodecallError('SHUTDOWN', 'paused for shutdown'));
    }
  }

  private interrupt(taskId: string, reason: CodecallError, actor?: string): boolean {
    const controller = this.running.get(taskId);
    if (!controller) return false;
    if (actor !== undefined) this.actors.set(taskId, actor);
    // A cancel wins over any pause, whichever came first (an abort of an aborted signal changes nothing, so it is
    // remembered apart from the signal and settling honours it).
    if (reason.code === 'CANCELLED') this.cancels.add(taskId);
    controller.abort(reason);
    return true;
  }

  private emit(event: RuntimeEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener's failure is its own; the task goes on.
    }
  }

  private startControlPoll(): void {
    if (this.controlPoll) return;
    this.controlPoll = setInterval(() => {
      if (this.running.size === 0) {
        clearInterval(this.controlPoll);
        this.controlPoll = undefined;
        return;
      }
      this.options.store.listControlRequests(this.options.owner).then(
        (requests) => {
          for (const r of requests) {
            if (r.action === 'cancel') this.cancel(r.taskId);
            else this.pause(r.taskId);
          }
        },
        () => undefined, // a closed or busy store: the next poll tries again
      );
    }, this.options.controlPollMs ?? DEFAULT_CONTROL_POLL_MS);
    this.controlPoll.unref();
  }

  private async run(lease: Lease): Promise<TaskRecord> {
    const { store } = this.options;
    const fenced = { fencingToken: lease.fencingToken };
    const controller = new AbortController();
    this.running.set(lease.taskId, controller);
    this.startControlPoll();
    this.emit({ type: 'status', taskId: lease.taskId, status: 'running', pauseReason: null });
    let current = lease;
    const renew = setInterval(
      () => {
        store.renewLease(current, { leaseMs: this.leaseMs }).then(
          (next) => (current = next),
          (e: unknown) =>
            controller.abort(isCodecallError(e) ? e : new CodecallError('FENCED', 'lost the lease')),
        );
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    const append = async (entries: readonly JournalEntryInput[]): Promise<void> => {
      const written = await store.appendJournal(lease.taskId, entries, fenced);
      if (this.options.onEvent) this.emit({ type: 'journal', taskId: lease.taskId, entries: written });
    };
    try {
      const ended = await this.runClaimed(lease, controller, append);
      this.emit({
        type: 'status',
        taskId: ended.id,
        status: ended.status,
        pauseReason: ended.pauseReason,
      });
      return ended;
    } finally {
      clearInterval(renew);
      this.running.delete(lease.taskId);
      this.actors.delete(lease.taskId);
      this.cancels.delete(lease.taskId);
      await store.releaseLease(current).catch(() => undefined);
    }
  }

  private async runClaimed(
    lease: Lease,
    controller: AbortController,
    append: (entries: readonly JournalEntryInput[]) => Promise<void>,
  ): Promise<TaskRecord> {
    const { store } = this.options;
    const fenced = { fencingToken: lease.fencingToken };
    const task = await store.getTask(lease.taskId);
    if (!task) throw new CodecallError('NOT_FOUND', `task ${lease.taskId} vanished`);
    // A request made for a run whose worker died takes effect without running anything.
    if (task.requestedAction !== null) {
      const cancel = task.requestedAction === 'cancel';
      return store.updateTask(
        lease.taskId,
        cancel
          ? { status: 'cancelled', error: { code: 'CANCELLED', message: 'cancelled by request' } }
          : { status: 'paused', pauseReason: 'user_request' },
        { ...fenced, append: [{ type: 'control', data: { action: cancel ? 'cancel' : 'pause' } }] },
      );
    }
    const fail = (error: CodecallError) =>
      store.updateTask(lease.taskId, { status: 'failed', error: error.toJSON() }, fenced);
    if (task.deadlineAt !== null && this.clock() >= task.deadlineAt) return fail(deadlineExceeded(task));
    let journal: JournalEntry[];
    try {
      journal = await store.readJournal(lease.taskId);
    } catch (e) {
      if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return await fail(e);
      throw e;
    }
    // Function calls run as a generated JavaScript program, whatever language the task names.
    const fc = task.input.kind === 'instruction' && task.input.mode === 'function_calling';
    const language = fc ? 'javascript' : task.input.language;
    const driver = this.drivers.find((d) => d.languages.includes(language));
    if (!driver) {
      return fail(
        new CodecallError('SANDBOX_UNAVAILABLE', `no sandbox driver here runs ${language}`, {
          details: { drivers: this.drivers.map((d) => d.name) },
        }),
      );
    }
    const codeHash = codeHashOf(task);
    const mismatch = checkTaskInput(task, journal, codeHash);
    if (mismatch) return fail(mismatch);
    const attempt = nextAttempt(journal, this.maxStalledAttempts);
    if ('error' in attempt) return fail(attempt.error);
    const incompatible = await checkManifest({
      store,
      lease,
      journal,
      engine: driver.engine,
      tools: this.options.tools,
      acceptChangedTools: this.options.acceptChangedTools === true,
      append,
    });
    if (incompatible) return incompatible;
    const { input } = task;
    const { agent } = this.options;
    if (input.kind === 'instruction' && !agent) {
      return fail(
        new CodecallError('MODEL_NOT_CONFIGURED', 'this runner has no model for instruction tasks'),
      );
    }
    // The guest's start clock is journaled once, so every replay starts at the same time. Exec mode runs one code
    // block, the task's program; an agent journals a block per step. The attempt comes last: whatever this run
    // journals after it is progress (crash-loop.ts).
    const recordedClock = journal.find((e) => e.type === 'clock')?.data.clock;
    const startClock = typeof recordedClock === 'number' ? recordedClock : this.clock();
    const setup: JournalEntryInput[] = [];
    if (typeof recordedClock !== 'number') setup.push({ type: 'clock', data: { clock: startClock } });
    if (input.kind === 'code' && !journal.some((e) => e.type === 'code_block')) {
      setup.push({ type: 'code_block', data: { block: 0, code_hash: codeHash } });
    }
    await append([...setup, attempt.entry]);
    // Whether a pause must look for input deadlines (settleRun reads the journal again only then).
    let inputRequested = journal.some((e) => e.type === 'input_request');
    const watchInputs = (entries: readonly JournalEntryInput[]): void => {
      if (!inputRequested) inputRequested = entries.some((e) => e.type === 'input_request');
    };
    const onLog = this.logSink(lease.taskId);
    const allowed = input.tools ? new Set(input.tools) : null;
    const bindings = allowed
      ? this.bindings.filter((b) => b === INPUT_WAIT_BINDING || allowed.has(`${b.namespace}.${b.name}`))
      : this.bindings;
    const runProgram = programRunner({
      driver,
      tools: this.options.tools,
      bindings,
      seed: input.seed,
      ...(input.limits ? { limits: input.limits } : {}),
      ...(input.constraints ? { policy: policyOf(input.constraints) } : {}),
      ...(input.files
        ? {
            files: input.files.map((f) => ({
              name: f.name,
              data: new Uint8Array(Buffer.from(f.data, 'base64')),
            })),
          }
        : {}),
      ...(onLog ? { onLog } : {}),
      startClock,
      clock: this.clock,
      signal: controller.signal,
      onAppend: watchInputs,
    });
    // The deadline interrupts the run like a cancel; the task fails with DEADLINE_EXCEEDED.
    const disarm = armDeadline(task, controller, this.clock);
    const result = await (
      input.kind === 'code' || !agent
        ? runProgram({
            code: input.kind === 'code' ? input.code : '',
            language,
            recorded: journal.filter((e) => REPLAY_ENTRIES.has(e.type)),
            append,
            keyPrefix: idempotencyScope(lease.taskId, 0),
          })
        : agent.run({
            task: { ...task, input },
            journal,
            append: (entries) => {
              watchInputs(entries);
              return append(entries);
            },
            runProgram,
            ...(onLog ? { onLog } : {}),
            signal: controller.signal,
            clock: this.clock,
          })
    ).finally(disarm);
    const actor = this.actors.get(lease.taskId);
    return settleRun({
      store,
      lease,
      task,
      result,
      cancelled: this.cancels.has(lease.taskId),
      inputRequested,
      ...(actor === undefined ? {} : { actor }),
      retryDelayMs: (retries) => retryDelay(retries, this.options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS),
      clock: this.clock,
    });
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
