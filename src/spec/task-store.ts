import type { JournalEntry, JournalEntryInput } from './journal.ts';
import type { LogEntry } from './sandbox.ts';
import type {
  ControlRequest,
  PauseReason,
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
}

export interface TaskFilter {
  readonly status?: TaskStatus;
  /** Only paused tasks whose `wakeAt` is at or before this epoch ms. */
  readonly dueBefore?: number;
  /** Default 50, at most 1000. */
  readonly limit?: number;
  /** Opaque, from a previous page's `nextCursor`. */
  readonly cursor?: string;
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
    },
  ): Promise<TaskRecord>;
  getTask(id: string, options?: StoreOptions): Promise<TaskRecord | null>;
  /** Oldest first. */
  listTasks(
    filter?: TaskFilter,
    options?: StoreOptions,
  ): Promise<{ tasks: TaskRecord[]; nextCursor: string | null }>;

  /**
   * Appends entries after the task's last one, atomically, chaining checksums. Refused with FENCED unless
   * `fencingToken` is the task's current token (the lease holder's).
   */
  appendJournal(
    taskId: string,
    entries: readonly JournalEntryInput[],
    options: StoreOptions & { fencingToken: number; now?: number },
  ): Promise<JournalEntry[]>;
  /** Entries with seq > afterSeq, verified: a broken checksum chain is CHECKPOINT_CORRUPT naming the seq. */
  readJournal(taskId: string, options?: StoreOptions & { afterSeq?: number }): Promise<JournalEntry[]>;

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
      },
  ): Promise<TaskRecord>;

  /**
   * Claims the oldest `pending` task, or a `running` one whose lease expired; sets it `running`, bumps its
   * fencing token and attempts, and returns the lease. Null when there is nothing to claim. Two concurrent
   * claimers never get the same task. With `taskId`, only that task is considered (same rules).
   */
  claimTask(
    owner: string,
    options: StoreOptions & { leaseMs: number; now?: number; taskId?: string },
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
  /** Gives a lease up (the task keeps its status); a stale lease is ignored. */
  releaseLease(lease: Lease, options?: StoreOptions): Promise<void>;

  close(): Promise<void>;
}
