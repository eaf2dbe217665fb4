import type { ApprovalInbox, Runtime, SubmitInput, TaskView } from '../api/index.ts';
import { CodecallError } from '../errors/index.ts';
import { isArtifactStore, readTaskForView } from '../spec/index.ts';
import type { JournalEntry, Principal, TaskStore } from '../spec/index.ts';

/**
 * What the MCP server drives tasks through, for one caller: the same in `codecall mcp` (a runtime in this process
 * over the --db file, or memory) and in `codecall serve` (the service's runtime, as the key's tenant). Every task
 * id it is given is checked to be the caller's: another tenant's task does not exist for it.
 */
export interface TaskBackend {
  /** Stores a task (the caller's tenant, actor) and queues it. */
  submit(input: SubmitInput): Promise<TaskView>;
  get(taskId: string): Promise<TaskView>;
  /** The task once it has paused or ended, or as it is when `signal` aborts (a wait that ran out). */
  settle(taskId: string, signal: AbortSignal): Promise<TaskView>;
  approvals(page: { limit?: number; cursor?: string }): Promise<ApprovalInbox>;
  decide(
    taskId: string,
    decision: 'approve' | 'reject',
    approvalIds: readonly string[] | undefined,
    reason: string | undefined,
  ): Promise<TaskView>;
  cancel(taskId: string, reason: string | undefined): Promise<TaskView>;
  /** Gives the value a task waits for (`input.wait(name)`), as `POST /api/v1/tasks/{id}/input` does. */
  provideInput(taskId: string, name: string, value: unknown): Promise<TaskView>;
  /** An artifact's bytes (a file the program left), or null. */
  artifact(taskId: string, name: string): Promise<Uint8Array | null>;
  /** The first entries of the task's journal, up to `maxBytes` of entry data (at least one); `more` if cut. */
  journal(taskId: string, maxBytes: number): Promise<{ entries: readonly JournalEntry[]; more: boolean }>;
}

export interface RuntimeTaskBackendOptions {
  readonly runtime: Runtime;
  /** The runtime's store: who a task belongs to (without reading its journal), artifacts. */
  readonly store: TaskStore;
  /** Who calls: tasks are created in its tenant; an admin sees every tenant's. */
  readonly principal: Principal;
}

/** Entries one journal resource gives at most (the page is cut by bytes too). */
const JOURNAL_ENTRIES = 1000;

function notFound(taskId: string): CodecallError {
  return new CodecallError('NOT_FOUND', `no task ${taskId}`, { details: { task_id: taskId } });
}

/** The task backend over a Runtime (ADR 0049): the CLI's and the service's. */
export function runtimeTaskBackend(options: RuntimeTaskBackendOptions): TaskBackend {
  const { runtime, store, principal } = options;
  const admin = principal.role === 'admin';
  const actor = principal.actor;
  /** The caller's task, or NOT_FOUND: the same answer for another tenant's as for none. */
  const visible = async (taskId: string): Promise<void> => {
    // A corrupt row is still found (its tenant column says whose it is); its view says it is corrupt.
    const task = await readTaskForView(store, taskId);
    if (!task || (!admin && task.tenant !== principal.tenant)) throw notFound(taskId);
  };
  const view = async (taskId: string): Promise<TaskView> => {
    const v = await runtime.get(taskId);
    if (!v) throw notFound(taskId);
    return v;
  };
  return {
    submit: (input) => runtime.submit({ ...input, tenant: principal.tenant }, { actor }),
    async get(taskId) {
      await visible(taskId);
      return view(taskId);
    },
    async settle(taskId, signal) {
      await visible(taskId);
      try {
        return await runtime.wait(taskId, { until: 'settled', signal });
      } catch (e) {
        if (signal.aborted) return view(taskId);
        throw e;
      }
    },
    approvals: (page) =>
      runtime.approvals({
        ...(admin ? {} : { tenant: principal.tenant }),
        ...(page.limit === undefined ? {} : { limit: page.limit }),
        ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
        decider: { actor, role: principal.role },
      }),
    async decide(taskId, decision, approvalIds, reason) {
      await visible(taskId);
      // Without ids: every request pending now, as POST /api/v1/tasks/{id}/approvals does.
      const ids = approvalIds ?? (await view(taskId)).pending_approvals.map((a) => a.id);
      return runtime.decide(
        taskId,
        ids.map((approvalId) => ({ approvalId, decision, ...(reason === undefined ? {} : { reason }) })),
        { actor, role: principal.role },
      );
    },
    async cancel(taskId, reason) {
      await visible(taskId);
      return runtime.cancel(taskId, { actor, ...(reason === undefined ? {} : { reason }) });
    },
    async provideInput(taskId, name, value) {
      await visible(taskId);
      return runtime.provideInput(taskId, name, value, { actor });
    },
    async artifact(taskId, name) {
      await visible(taskId);
      return isArtifactStore(store) ? store.readArtifact(taskId, name) : null;
    },
    async journal(taskId, maxBytes) {
      await visible(taskId);
      return store.readJournalPage(taskId, { maxBytes, limit: JOURNAL_ENTRIES });
    },
  };
}
