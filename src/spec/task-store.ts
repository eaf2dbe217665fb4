import type { JournalEntry, JournalEntryInput } from './journal.ts';
import type { JournalSummary } from './journal-summary.ts';
import type { StoreHealth } from './store-health.ts';
import type { CorruptTask } from './corrupt-task.ts';
import type { StatsQuery, StoreStats } from './store-stats.ts';
import type { LogEntry } from './sandbox.ts';
import type { JournalLimits } from './limits.ts';
import type {
  ControlRequest,
  PauseReason,
  TaskAttributes,
  TaskError,
  TaskInput,
  TaskRecord,
  TaskResources,
  TaskStatus,
} from './task.ts';

export interface StoreOptions {
  readonly signal?: AbortSignal;
}

/** A worker's claim on a running task. Writes carrying a stale fencing token are refused with `FENCED`. */
export interface Lease {
  readonly taskId: string;
  readonly owner: string;
  readonly fencingToken: number;
  /** Epoch ms. */
  readonly expiresAt: number;
}

export interface TaskPatch {
  readonly status?: TaskStatus;
  readonly pauseReason?: PauseReason | null;
  readonly result?: string | null;
  readonly error?: TaskError | null;
  readonly executionLog?: readonly LogEntry[] | null;
  readonly resources?: TaskResources | null;
  readonly wakeAt?: number | null;
  /** With `status: 'pending'` from running: a retry, not claimed before this epoch ms. */
  readonly runAfter?: number | null;
  readonly retries?: number;
}

/** A batch of tasks accepted together (`createBatch`), with the current count of its tasks per status. */
export interface BatchRecord {
  readonly id: string;
  readonly tenant: string;
  readonly callbackUrl: string | null;
  readonly size: number;
  readonly counts: Readonly<Record<TaskStatus, number>>;
  readonly taskIds: readonly string[];
  readonly createdAt: string;
  /** When its last task ended. */
  readonly completedAt: string | null;
}

/** A link of a task's audit log: status changes with their actor, chained like the journal. */
export interface AuditEntry {
  readonly taskId: string;
  readonly seq: number;
  /** `created` { tenant, actor }, `status` { from, to, pause_reason, error_code, actor, journal_seq }. */
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  /** SHA-256 over (previous checksum, seq, type, canonical data), as in the journal. */
  readonly checksum: string;
  readonly createdAt: string;
}

export type NewTaskAttributes = Partial<TaskAttributes>;

export interface TaskFilter {
  readonly status?: TaskStatus;
  /** Only tasks paused for this reason (e.g. `shutdown`, which any live runtime resumes). */
  readonly pauseReason?: PauseReason;
  readonly tenant?: string;
  readonly sessionId?: string;
  readonly batchId?: string;
  /** Only paused tasks whose deadline is at or before this epoch ms. */
  readonly deadlineBefore?: number;
  /** Only paused tasks whose `wakeAt` is at or before this epoch ms. */
  readonly dueBefore?: number;
  /** Default 50, at most 1000. */
  readonly limit?: number;
  /** Opaque, from a previous page's `nextCursor` (of a list in the same order). */
  readonly cursor?: string;
  /** `oldest` first (the default) or `newest` first. */
  readonly order?: 'oldest' | 'newest';
  /**
   * A list's page (ADR 0036): each task's input fields over MAX_LISTED_FIELD_CHARS come as their digests
   * (`TaskRecord.listedInput`), read without the fields themselves. Such a record is for showing, never for running.
   */
  readonly summarised?: boolean;
}

export type TaskCountFilter = Pick<TaskFilter, 'status' | 'tenant' | 'sessionId' | 'batchId'>;

/** A task whose row or journal changed (`readChanges`): enough for a stream to tell whether to re-read it. */
export interface TaskChange {
  readonly taskId: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly pauseReason: PauseReason | null;
  readonly updatedAt: string;
  /** Journal entries it holds (its last seq). */
  readonly journalEntries: number;
  /** Its last status change's place in the store's order of status changes (`readStatusChanges`). */
  readonly statusSeq: number;
}

/** Tasks whose status changed after a cursor (`readStatusChanges`), each with its place in that order. */
export interface StatusChanges {
  /** In status change order; a task changed twice since the cursor is in it once, at its latest. */
  readonly tasks: { readonly seq: number; readonly task: TaskRecord | CorruptTask }[];
  /** Pass as `after` next time (the last `seq`, or `after` when none). */
  readonly cursor: number;
}

/** The tasks that revise a task (`listRevisions`, ADR 0034): the newest ones, oldest first, and how many there are. */
export interface Revisions {
  /** Oldest first: the newest `limit` revisions when there are more. */
  readonly taskIds: readonly string[];
  /** Every revision of the task (in the tenant asked), however many `taskIds` holds. */
  readonly total: number;
}

/** How many revisions `listRevisions` gives by default (a task's view names at most these), and at most. */
export const DEFAULT_REVISIONS_LIMIT = 20;
export const MAX_REVISIONS_LIMIT = 1000;

/**
 * What a store tells the processes on it as it happens (`TaskStore.watch`), so they need not poll: work to claim
 * (a task became pending, a lease was given up), a pause or cancel asked of a running task (for the lease owner
 * named), and that tasks changed (a change feed reads which with `readChanges`).
 */
export type StoreSignal =
  | { readonly kind: 'work' }
  | {
      readonly kind: 'control';
      readonly taskId: string;
      readonly owner: string | null;
      readonly action: ControlRequest;
    }
  | { readonly kind: 'changed' };

export interface TaskChanges {
  /** In change order; a task changed twice since the cursor is in it once. */
  readonly changes: TaskChange[];
  /** Pass as `after` next time. */
  readonly cursor: number;
}

/**
 * Durable storage for tasks, their journals and leases. Every implementation (SQLite now, PostgreSQL later)
 * passes test/conformance/task-store-conformance.ts. Errors are CodecallErrors: NOT_FOUND, FENCED,
 * VERSION_CONFLICT, CHECKPOINT_CORRUPT, ILLEGAL_TRANSITION, STORE_CLOSED.
 */
export interface TaskStore {
  /**
   * Creates a `pending` task and its first journal entry (`task_input`), atomically. With `idempotency`, a key
   * already used for the same request (`requestHash`) returns the task it created; for another request it is
   * IDEMPOTENCY_CONFLICT.
   */
  createTask(
    input: TaskInput,
    options?: StoreOptions & {
      id?: string;
      now?: number;
      idempotency?: { readonly key: string; readonly requestHash: string };
      attributes?: NewTaskAttributes;
      /** Recorded in the audit log (default `system`). */
      actor?: string;
    },
  ): Promise<TaskRecord>;
  /**
   * Creates a batch and all its tasks in one transaction: all or none. Each task's tenant is the batch's; the
   * batch's `callbackUrl` gets `batch.completed` once every task has ended.
   */
  createBatch(
    tasks: readonly { readonly input: TaskInput; readonly attributes?: NewTaskAttributes }[],
    options: StoreOptions & {
      tenant: string;
      callbackUrl?: string | null;
      id?: string;
      now?: number;
      actor?: string;
    },
  ): Promise<{ batch: BatchRecord; tasks: TaskRecord[] }>;
  getBatch(id: string, options?: StoreOptions): Promise<BatchRecord | null>;
  /** The task's audit log, verified like the journal (CHECKPOINT_CORRUPT names the broken seq). */
  readAudit(
    taskId: string,
    options?: StoreOptions & { afterSeq?: number; limit?: number },
  ): Promise<AuditEntry[]>;
  /**
   * A row that cannot be decoded (a JSON column that is not JSON, or not of its shape) is CHECKPOINT_CORRUPT with
   * `CorruptRowDetails` (`log: 'task'`, the column, and the task's id, tenant, status and times).
   */
  getTask(id: string, options?: StoreOptions): Promise<TaskRecord | null>;
  /** How many tasks match (an indexed COUNT, for gauges such as the queue's depth). */
  countTasks(filter?: TaskCountFilter, options?: StoreOptions): Promise<number>;
  /**
   * Oldest first, or newest first with `order: 'newest'`. Rows of the page that cannot be decoded are not in
   * `tasks` but in `corrupt` (they still count towards `limit` and the cursor): one bad row fails no list.
   */
  listTasks(
    filter?: TaskFilter,
    options?: StoreOptions,
  ): Promise<{ tasks: TaskRecord[]; nextCursor: string | null; corrupt?: CorruptTask[] }>;

  /**
   * Appends entries after the task's last one, atomically, chaining checksums. Refused with FENCED unless
   * `fencingToken` is the task's current token (the lease holder's), and with JOURNAL_LIMIT (nothing written)
   * when the entries would take the journal over `limits`.
   */
  appendJournal(
    taskId: string,
    entries: readonly JournalEntryInput[],
    options: StoreOptions & { fencingToken: number; now?: number; limits?: JournalLimits },
  ): Promise<JournalEntry[]>;
  /**
   * The tasks whose status, pause reason, update time or journal changed after `after` (the cursor of an earlier
   * answer), at most `limit` (default 1000; the rest come next time); `after: null` returns none and the cursor
   * of now. One indexed query for the whole process, whatever the number of streams (a change feed's tick).
   * Optional: without it a process sees only its own changes.
   */
  readChanges?(options: StoreOptions & { after: number | null; limit?: number }): Promise<TaskChanges>;
  /**
   * The tasks (of `tenant`, or all) whose status, pause reason or update time changed after `after` (a cursor of an
   * earlier answer, or a `seq`), in the order of those changes, each once with its row as of its latest change, at
   * most `limit` (default 100, at most 1000), summarised as a list's are (`TaskFilter.summarised`). Journal
   * appends are not status changes. `after: null` returns none
   * and the cursor of now. The cursor of GET /task-events (ADR 0028); optional: without it that stream cannot
   * resume.
   */
  readStatusChanges?(
    options: StoreOptions & { after: number | null; tenant?: string; limit?: number },
  ): Promise<StatusChanges>;
  /**
   * The tasks of `tenant` created as revisions of `taskId` (`input.revisionOf`, ADR 0034): the newest `limit`
   * (default DEFAULT_REVISIONS_LIMIT, at most MAX_REVISIONS_LIMIT; INVALID_ARGUMENT otherwise), oldest first, and
   * how many there are; none for a task never revised or unknown. Reads neither rows nor journals (an indexed
   * read), so a task's view names its revisions cheaply (`revised_by`). Optional: without it a view does not.
   */
  listRevisions?(
    taskId: string,
    options: StoreOptions & { tenant: string; limit?: number },
  ): Promise<Revisions>;
  /**
   * The operator's view (ADR 0054): unended tasks counted by tenant, status and pause reason; the tasks that
   * ended since `since` and the tool calls their journals hold, the newest up to the store's bounds. Read-only and
   * bounded (tasks by their status change order, journals by their byte count). Optional: without it a server has
   * no GET /api/v1/stats/overview.
   */
  readStats?(query: StatsQuery, options?: StoreOptions): Promise<StoreStats>;
  /**
   * Entries with seq > afterSeq, verified: a broken checksum chain is CHECKPOINT_CORRUPT naming the seq. The chain
   * is verified from the stored checksum of the entry at `afterSeq` (from seq 1 when 0), so a read of the entries
   * from seq N (`afterSeq: N - 1`) vouches for the entry at N and everything after it, and N's checksum for the
   * journal before it (a resume from a kept paused VM reads only that: ADR 0056). A missing entry at `afterSeq`
   * with entries after it is CHECKPOINT_CORRUPT.
   */
  readJournal(
    taskId: string,
    options?: StoreOptions & { afterSeq?: number; limit?: number },
  ): Promise<JournalEntry[]>;
  /**
   * A page of `readJournal` that ends before the entry that would take its data over `maxBytes` UTF-8 bytes (the
   * first is always in it), so one read costs a bounded time whatever the journal holds (ADR 0029); `more` says
   * whether entries follow it (within `limit`, when given).
   */
  readJournalPage(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number; maxBytes: number },
  ): Promise<{ entries: JournalEntry[]; more: boolean }>;

  /**
   * The task's JournalSummary (foldJournalSummary over its journal), kept with each append in the append's own
   * transaction, so a view reads it instead of the journal (ADR 0035). Given only when it is of SUMMARY_FORMAT and
   * of the journal's head as it is now: the last entry's seq and checksum, and as many entries as that seq (a row
   * removed from the middle shows). Null otherwise (a task journaled before summaries were kept, a summary of
   * another format or that no longer matches its journal): the reader rebuilds it from the verified journal and
   * keeps it with `saveJournalSummary` (readSummaryForView). NOT_FOUND when there is no such task.
   */
  readJournalSummary(taskId: string, options?: StoreOptions): Promise<JournalSummary | null>;
  /**
   * Keeps a summary a reader folded from the journal, if it is of the journal's head now (its seq and checksum);
   * whether it was kept (false: entries came after it). Appends keep it current from then on.
   */
  saveJournalSummary(taskId: string, summary: JournalSummary, options?: StoreOptions): Promise<boolean>;

  /**
   * Applies a patch. A status change must be legal per TASK_TRANSITIONS (ILLEGAL_TRANSITION otherwise, with the
   * current status in details). A running task with a requested cancel that is patched to `paused` ends
   * `cancelled` instead (error CANCELLED): the cancel was accepted while it ran and must not be lost. Guarded by `fencingToken` (FENCED) or `expectedVersion` (VERSION_CONFLICT).
   */
  updateTask(
    taskId: string,
    patch: TaskPatch,
    options: StoreOptions &
      ({ fencingToken: number } | { expectedVersion: number }) & {
        now?: number;
        /** Journal entries appended in the same transaction (e.g. a decision taken while the task was paused). */
        append?: readonly JournalEntryInput[];
        /** Who made a status change, for the audit log (default: the lease owner, or `system`). */
        actor?: string;
      },
  ): Promise<TaskRecord>;

  /**
   * Claims the `pending` task of highest priority, oldest first (not one whose `runAfter` is still ahead, nor one
   * whose tenant already runs `maxPerTenant` tasks, nor any while `maxRunning` tasks run: both counted over every
   * runner on the store, expired leases included), or a `running` one whose lease expired (whatever the caps: it
   * holds its slots already); sets it `running`, bumps its fencing token and attempts, and returns the lease. Null
   * when there is nothing to claim. Two concurrent claimers never get the same task nor pass a cap together.
   * With `taskId`, only that task is considered (same rules).
   */
  claimTask(
    owner: string,
    options: StoreOptions & {
      leaseMs: number;
      now?: number;
      taskId?: string;
      maxPerTenant?: number;
      /**
       * A soft share of the slots (work-conserving): a tenant running this many is served only when no tenant
       * running fewer has a claimable task, so it may take every slot while alone, never one another tenant waits for.
       */
      tenantShare?: number;
      /**
       * Slots kept for tenants below their share (with maxRunning and tenantShare): a tenant at its share takes no
       * slot once fewer than this many are free, so another tenant's first task never waits for a borrowed one.
       */
      tenantReserve?: number;
      maxRunning?: number;
    },
  ): Promise<Lease | null>;
  /**
   * Asks the runner of a `running` task to pause or cancel it (ILLEGAL_TRANSITION for any other status; a
   * cancel is not downgraded to a pause). Cleared when the task leaves `running`.
   */
  requestControl(taskId: string, action: ControlRequest, options?: StoreOptions): Promise<TaskRecord>;
  /** Requests waiting for the tasks this owner holds leases on. */
  listControlRequests(
    owner: string,
    options?: StoreOptions,
  ): Promise<{ taskId: string; action: ControlRequest }[]>;
  /** Extends a lease; FENCED if it was lost. */
  renewLease(lease: Lease, options: StoreOptions & { leaseMs: number; now?: number }): Promise<Lease>;
  /**
   * Proves the lease is still held (the task running under this owner and fencing token, its lease not expired at
   * `now`); FENCED if not. A worker asks before it starts a tool call, so one that stalled past its lease (and may
   * have been replaced) does no side effect. Reads only.
   */
  assertLease(lease: Lease, options?: StoreOptions & { now?: number }): Promise<void>;
  /** Gives a lease up (the task keeps its status); a stale lease is ignored. */
  releaseLease(lease: Lease, options?: StoreOptions): Promise<void>;
  /**
   * Whether the store can commit now: a small write probe, run at most about once a second (a probe flood
   * cannot load the database); with `probe: false`, what the last probe and the operations since saw. A store
   * that recovers by itself (reconnecting after a read-only episode) does so here. Optional: without it,
   * readiness only asks whether the store answers.
   */
  checkHealth?(options?: StoreOptions & { probe?: boolean }): Promise<StoreHealth>;
  /**
   * Ends at once the unexpired leases of every owner `isGone` says no longer runs (a process on this machine that
   * died): their `running` tasks are claimable now instead of when the lease runs out. Fencing tokens are left as
   * they are (the next claim bumps them), so an owner wrongly judged gone is fenced like any lost lease. Returns
   * the ids of the tasks freed.
   */
  expireLeases(
    isGone: (owner: string) => boolean,
    options?: StoreOptions & { now?: number },
  ): Promise<string[]>;

  /**
   * Calls `listener` with the signals of every process on the store (this one's included) until the returned
   * function is called. Signals are hints, not a log: one may be lost (a reconnect), so callers still poll, just
   * rarely. Optional: without it a process finds work, requests and changes by polling alone.
   */
  watch?(listener: (signal: StoreSignal) => void): () => void;

  close(): Promise<void>;
}
