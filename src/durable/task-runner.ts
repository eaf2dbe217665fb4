import { encodeValue } from '../codec/index.ts';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type {
  ExecutionHost,
  ExecutionResult,
  GuestToolBinding,
  JournalEntry,
  JournalEntryInput,
  Lease,
  LogEntry,
  SandboxDriver,
  TaskRecord,
  TaskStore,
} from '../spec/index.ts';
import { DEFAULT_MAX_STALLED_ATTEMPTS, nextAttempt } from './crash-loop.ts';
import { runJournaled } from './run-journaled.ts';
import { toolManifestHash } from './tool-manifest.ts';
import type { ManifestTools } from './tool-manifest.ts';

export const DEFAULT_LEASE_MS = 15_000;

/** The tools a runner serves (a ToolRegistry fits). */
export interface RunnerTools extends ManifestTools {
  readonly bindings: readonly GuestToolBinding[];
  /** `onLog` is passed only when the runner has one. */
  host(options?: { onLog?: (entry: LogEntry) => void }): ExecutionHost;
}

export interface TaskRunnerOptions {
  readonly store: TaskStore;
  readonly driver: SandboxDriver;
  readonly tools: RunnerTools;
  /** Identifies this runner in leases. */
  readonly owner: string;
  readonly leaseMs?: number;
  /** Resume tasks whose journal was written with other tools or another engine (default: pause them). */
  readonly acceptChangedTools?: boolean;
  /** Runs in a row that may die without progress before the task fails with CRASH_LOOP. */
  readonly maxStalledAttempts?: number;
  readonly clock?: () => number;
  /** Receives the guest's console output (passed to `tools.host({ onLog })`). */
  readonly onLog?: (entry: LogEntry) => void;
}

/** The journal entries a replay needs. */
const TOOL_ENTRIES = new Set([
  'tool_intent',
  'tool_outcome',
  'approval_request',
  'approval_decision',
  'control',
]);

/**
 * Claims tasks from the store and runs them through the journal: a first run journals as it goes, a resumed or
 * recovered task replays its journal and continues. Pause and cancel interrupt the sandbox at once; a paused task
 * holds no VM and no lease.
 */
export class TaskRunner {
  private readonly running = new Map<string, AbortController>();
  private readonly leaseMs: number;
  private readonly maxStalledAttempts: number;
  private readonly clock: () => number;

  constructor(private readonly options: TaskRunnerOptions) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxStalledAttempts = options.maxStalledAttempts ?? DEFAULT_MAX_STALLED_ATTEMPTS;
    this.clock = options.clock ?? Date.now;
  }

  /** Claims the next runnable task and runs it until it ends or pauses; null when there was none. */
  async runNext(): Promise<TaskRecord | null> {
    const lease = await this.options.store.claimTask(this.options.owner, { leaseMs: this.leaseMs });
    return lease ? this.run(lease) : null;
  }

  /** Claims this task (if it is runnable) and runs it until it ends or pauses; null when it was not claimable. */
  async runTask(taskId: string): Promise<TaskRecord | null> {
    const lease = await this.options.store.claimTask(this.options.owner, { leaseMs: this.leaseMs, taskId });
    return lease ? this.run(lease) : null;
  }

  /**
   * Records decisions on a task paused for approval (each bound to the exact call it was asked for) and runs it
   * on: approved calls run, rejected ones raise a catchable ToolRejectedError in the guest.
   */
  async decide(
    taskId: string,
    decisions: readonly { approvalId: string; decision: 'approve' | 'reject'; reason?: string }[],
    actor: string,
  ): Promise<TaskRecord | null> {
    const { store } = this.options;
    const task = await store.getTask(taskId);
    if (!task) throw new CodecallError('NOT_FOUND', `no task ${taskId}`);
    if (task.status !== 'paused' || task.pauseReason !== 'approval_required') {
      throw new CodecallError('ILLEGAL_TRANSITION', `task ${taskId} is not waiting for approval`, {
        details: { status: task.status, pause_reason: task.pauseReason },
      });
    }
    const journal = await store.readJournal(taskId);
    const pending = new Set(
      journal.filter((e) => e.type === 'approval_request').map((e) => String(e.data.approval_id)),
    );
    for (const e of journal) if (e.type === 'approval_decision') pending.delete(String(e.data.approval_id));
    for (const d of decisions) {
      if (!pending.has(d.approvalId)) {
        throw new CodecallError(
          'INVALID_ARGUMENT',
          `approval ${d.approvalId} is not pending on task ${taskId}`,
          {
            details: { pending: [...pending] },
          },
        );
      }
    }
    await store.updateTask(taskId, { status: 'pending' }, { expectedVersion: task.version });
    const lease = await store.claimTask(this.options.owner, { leaseMs: this.leaseMs, taskId });
    if (!lease) return null;
    const entries = decisions.map((d) => ({
      type: 'approval_decision' as const,
      data: { approval_id: d.approvalId, decision: d.decision, actor, reason: d.reason ?? '' },
    }));
    await store.appendJournal(taskId, entries, { fencingToken: lease.fencingToken });
    return this.run(lease);
  }

  /** Interrupts a task running here; it ends `paused` (user_request). */
  pause(taskId: string): boolean {
    return this.interrupt(taskId, new CodecallError('PAUSED', 'paused by request'));
  }

  /** Interrupts a task running here; it ends `cancelled`. */
  cancel(taskId: string): boolean {
    return this.interrupt(taskId, new CodecallError('CANCELLED', 'cancelled by request'));
  }

  private interrupt(taskId: string, reason: CodecallError): boolean {
    const controller = this.running.get(taskId);
    if (!controller) return false;
    controller.abort(reason);
    return true;
  }

  private async run(lease: Lease): Promise<TaskRecord> {
    const { store } = this.options;
    const fenced = { fencingToken: lease.fencingToken };
    const controller = new AbortController();
    this.running.set(lease.taskId, controller);
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
    try {
      const task = await store.getTask(lease.taskId);
      if (!task) throw new CodecallError('NOT_FOUND', `task ${lease.taskId} vanished`);
      let journal: JournalEntry[];
      try {
        journal = await store.readJournal(lease.taskId);
      } catch (e) {
        if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') {
          return await store.updateTask(lease.taskId, { status: 'failed', error: e.toJSON() }, fenced);
        }
        throw e;
      }
      const attempt = nextAttempt(journal, this.maxStalledAttempts);
      if ('error' in attempt) {
        return await store.updateTask(
          lease.taskId,
          { status: 'failed', error: attempt.error.toJSON() },
          fenced,
        );
      }
      await store.appendJournal(lease.taskId, [attempt.entry], fenced);
      const incompatible = await this.checkManifest(lease, journal);
      if (incompatible) return incompatible;
      // The guest's start clock is journaled once, so every replay starts at the same time.
      const recordedClock = journal.find((e) => e.type === 'clock')?.data.clock;
      const startClock = typeof recordedClock === 'number' ? recordedClock : this.clock();
      if (typeof recordedClock !== 'number') {
        await store.appendJournal(lease.taskId, [{ type: 'clock', data: { clock: startClock } }], fenced);
      }
      const result = await runJournaled({
        driver: this.options.driver,
        request: {
          code: task.input.code,
          language: task.input.language,
          tools: this.options.tools.bindings,
          seed: task.input.seed,
          ...(task.input.limits ? { limits: task.input.limits } : {}),
        },
        live: this.options.onLog
          ? this.options.tools.host({ onLog: this.options.onLog })
          : this.options.tools.host(),
        effectOf: (call) =>
          call.kind === 'timer'
            ? 'read'
            : (this.options.tools.get(call.namespace, call.name)?.effect ?? 'unsafe'),
        recorded: journal.filter((e) => TOOL_ENTRIES.has(e.type)),
        append: async (entries: readonly JournalEntryInput[]) => {
          await store.appendJournal(lease.taskId, entries, fenced);
        },
        startClock,
        needsApproval: (call) => {
          if (call.kind !== 'tool') return false;
          const policy = this.options.tools.get(call.namespace, call.name)?.requiresApproval;
          return typeof policy === 'function' ? policy(call.args) : policy === true;
        },
        // One code block per task in exec mode; agent steps will number their blocks.
        keyPrefix: `${lease.taskId}:0`,
        clock: this.clock,
        signal: controller.signal,
      });
      return await this.settle(lease, result);
    } finally {
      clearInterval(renew);
      this.running.delete(lease.taskId);
      await store.releaseLease(current).catch(() => undefined);
    }
  }

  /**
   * The first run journals the tools and engine; a later run with other tools (names, schemas, effects) or
   * another engine would replay against a different world, so the task pauses for a human unless
   * `acceptChangedTools` says to go on.
   */
  private async checkManifest(lease: Lease, journal: readonly JournalEntry[]): Promise<TaskRecord | null> {
    const { store } = this.options;
    const fenced = { fencingToken: lease.fencingToken };
    const now = { tools_hash: toolManifestHash(this.options.tools), engine: this.options.driver.engine };
    const recorded = journal.find((e) => e.type === 'manifest')?.data;
    if (!recorded) {
      await store.appendJournal(lease.taskId, [{ type: 'manifest', data: now }], fenced);
      return null;
    }
    if (recorded.tools_hash === now.tools_hash && recorded.engine === now.engine) return null;
    const what =
      recorded.engine === now.engine
        ? 'the tools changed'
        : `the engine changed (${String(recorded.engine)} -> ${now.engine})`;
    if (this.options.acceptChangedTools) {
      await store.appendJournal(
        lease.taskId,
        [{ type: 'manifest', data: { ...now, accepted: what } }],
        fenced,
      );
      return null;
    }
    const message = `the journal was written with other tools or another engine: ${what}`;
    await store.appendJournal(lease.taskId, [{ type: 'control', data: { action: 'incompatible' } }], fenced);
    return store.updateTask(
      lease.taskId,
      {
        status: 'paused',
        pauseReason: 'needs_attention',
        error: { code: 'INCOMPATIBLE_CHECKPOINT', message },
      },
      fenced,
    );
  }

  private async settle(lease: Lease, result: ExecutionResult): Promise<TaskRecord> {
    const { store } = this.options;
    const fenced = { fencingToken: lease.fencingToken };
    if (result.status === 'succeeded') {
      return store.updateTask(
        lease.taskId,
        { status: 'succeeded', result: encodeValue(result.value) },
        fenced,
      );
    }
    const { code, message } = result.error;
    switch (code) {
      case 'PAUSED':
        await store.appendJournal(lease.taskId, [{ type: 'control', data: { action: 'pause' } }], fenced);
        return store.updateTask(lease.taskId, { status: 'paused', pauseReason: 'user_request' }, fenced);
      case 'APPROVAL_REQUIRED':
        await store.appendJournal(
          lease.taskId,
          [{ type: 'control', data: { action: 'await_approval' } }],
          fenced,
        );
        return store.updateTask(lease.taskId, { status: 'paused', pauseReason: 'approval_required' }, fenced);
      case 'NEEDS_ATTENTION':
        await store.appendJournal(
          lease.taskId,
          [{ type: 'control', data: { action: 'needs_attention' } }],
          fenced,
        );
        return store.updateTask(
          lease.taskId,
          { status: 'paused', pauseReason: 'needs_attention', error: { code, message } },
          fenced,
        );
      case 'CANCELLED':
        await store.appendJournal(lease.taskId, [{ type: 'control', data: { action: 'cancel' } }], fenced);
        return store.updateTask(lease.taskId, { status: 'cancelled', error: { code, message } }, fenced);
      default:
        return store.updateTask(lease.taskId, { status: 'failed', error: { code, message } }, fenced);
    }
  }
}
