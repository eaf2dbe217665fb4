import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { ApprovalRules, JournalEntry, TaskRecord, TaskStore } from '../spec/index.ts';
import { OPEN_APPROVAL_RULES, isTerminal, readJournalPaged } from '../spec/index.ts';
import { assertMayDecide } from './approver-check.ts';
import { CONFLICT_RETRY, retryOnConflict } from './conflict-retry.ts';
import { decideApprovals, provideInput, resolveAttention, resumePaused } from './paused-actions.ts';
import type { PausedAction } from './paused-actions.ts';
import type { Scheduler } from './runtime-scheduler.ts';
import type { RuntimeViews } from './runtime-views.ts';
import type { RuntimeObserver } from '../api/index.ts';
import type { TaskRunner } from './task-runner.ts';
import type {
  ActorOptions,
  ApprovalDecision,
  AttentionDecision,
  DeciderOptions,
  RuntimeEvent,
  TaskView,
} from '../api/index.ts';

export interface RuntimeControlOptions {
  readonly store: TaskStore;
  readonly runner: Pick<TaskRunner, 'pause' | 'cancel' | 'runTask'>;
  readonly scheduler: Pick<Scheduler, 'kick' | 'track' | 'settled'>;
  readonly views: RuntimeViews;
  readonly emit: (event: RuntimeEvent) => void;
  readonly observer?: RuntimeObserver;
  /** The operator's rules on who decides approvals (ADR 0031); they tighten each request's own. Default open. */
  readonly approvals?: ApprovalRules;
  readonly clock?: () => number;
}

/**
 * What people do to tasks: pause, resume, cancel, approve, give input, resolve an attention. A task running here
 * is interrupted at once, one running elsewhere through the store; any other is changed by an optimistic write,
 * tried again on a conflict (CONFLICT_RETRY).
 */
export class RuntimeControl {
  constructor(private readonly options: RuntimeControlOptions) {}

  pause(taskId: string, options: ActorOptions = {}): Promise<TaskView> {
    return this.observed(taskId, 'pause', this.pauseTask(taskId, options.actor ?? 'api'));
  }

  resume(taskId: string, options: ActorOptions & { force?: boolean } = {}): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    const resumed = this.onPaused(taskId, actor, (task) => resumePaused(task, actor, options.force === true));
    return this.observed(taskId, 'resume', resumed);
  }

  cancel(taskId: string, options: ActorOptions = {}): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    const { runner, scheduler, store, views } = this.options;
    return retryOnConflict(CONFLICT_RETRY, async () => {
      const task = await views.mustGet(taskId);
      if (isTerminal(task.status)) {
        throw new CodecallError(
          'ILLEGAL_TRANSITION',
          `task ${taskId} has already ${task.status === 'cancelled' ? 'been cancelled' : task.status}`,
          { details: { status: task.status } },
        );
      }
      if (task.status === 'running') {
        if (runner.cancel(taskId, actor)) return this.afterRun(taskId);
        await store.requestControl(taskId, 'cancel');
        // Nobody holds the lease (its worker died): take it and cancel here.
        const ended = await scheduler.track(taskId, runner.runTask(taskId));
        return views.of(ended ?? (await views.mustGet(taskId)));
      }
      const message = `cancelled by ${actor}${options.reason ? `: ${options.reason}` : ''}`;
      return this.apply(
        task,
        {
          patch: { status: 'cancelled', error: { code: 'CANCELLED', message }, wakeAt: null },
          append: [{ type: 'control', data: { action: 'cancel', actor, reason: options.reason ?? '' } }],
        },
        actor,
      );
    });
  }

  decide(
    taskId: string,
    decisions: readonly ApprovalDecision[],
    options: DeciderOptions = {},
  ): Promise<TaskView> {
    const actor = options.actor ?? 'api';
    const decider = { actor, ...(options.role === undefined ? {} : { role: options.role }) };
    const { store, approvals = OPEN_APPROVAL_RULES, clock = Date.now } = this.options;
    // Every path decides here (HTTP, CLI, in-process): who may decide is checked where the decision is made.
    const decided = this.onPaused(taskId, actor, async (task, journal) => {
      const action = decideApprovals(task, journal, decisions, actor, clock());
      await assertMayDecide(store, approvals, decider, taskId, action.decided);
      return action;
    });
    // An approval past its time that the sweep has not journaled yet: sweep now.
    decided.catch((e: unknown) => {
      if (isCodecallError(e) && e.code === 'APPROVAL_EXPIRED') this.options.scheduler.kick(true);
    });
    return decided;
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

  /**
   * One try at an action: the patch and the journal entries in one transaction, guarded by the version `task`
   * was read at (VERSION_CONFLICT when it changed meanwhile).
   */
  async apply(task: TaskRecord, action: PausedAction, actor?: string): Promise<TaskView> {
    const updated = await this.options.store.updateTask(task.id, action.patch, {
      expectedVersion: task.version,
      append: action.append,
      ...(actor === undefined ? {} : { actor }),
    });
    if (updated.status !== task.status) {
      this.options.emit({
        type: 'status',
        taskId: task.id,
        status: updated.status,
        pauseReason: updated.pauseReason,
      });
    }
    return this.options.views.of(updated);
  }

  private pauseTask(taskId: string, actor: string): Promise<TaskView> {
    const { runner, store, views } = this.options;
    return retryOnConflict(CONFLICT_RETRY, async () => {
      const task = await views.mustGet(taskId);
      if (task.status === 'running') {
        if (runner.pause(taskId, actor)) return this.afterRun(taskId);
        await store.requestControl(taskId, 'pause');
        return views.current(taskId);
      }
      if (task.status !== 'pending') {
        throw new CodecallError(
          'ILLEGAL_TRANSITION',
          `task ${taskId} is ${task.status}; only a pending or running task pauses`,
          { details: { status: task.status, pause_reason: task.pauseReason } },
        );
      }
      return this.apply(
        task,
        {
          patch: { status: 'paused', pauseReason: 'user_request' },
          append: [{ type: 'control', data: { action: 'pause', actor } }],
        },
        actor,
      );
    });
  }

  /** Applies a human's action to a paused task in one transaction, then lets it run (here, when started). */
  private async onPaused(
    taskId: string,
    actor: string,
    build: (task: TaskRecord, journal: JournalEntry[]) => PausedAction | Promise<PausedAction>,
  ): Promise<TaskView> {
    const { store, views } = this.options;
    const view = await retryOnConflict(CONFLICT_RETRY, async () => {
      const task = await views.mustGet(taskId);
      return this.apply(task, await build(task, await readJournalPaged(store, taskId)), actor);
    });
    this.options.scheduler.kick();
    return view;
  }

  private observed(taskId: string, action: 'pause' | 'resume', done: Promise<TaskView>): Promise<TaskView> {
    try {
      this.options.observer?.controlRequested?.(taskId, action, done);
    } catch {
      // An observer's failure is its own.
    }
    return done;
  }

  private async afterRun(taskId: string): Promise<TaskView> {
    await this.options.scheduler.settled(taskId);
    return this.options.views.current(taskId);
  }
}
