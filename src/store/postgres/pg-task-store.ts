import type pg from 'pg';
import type {
  ArtifactInfo,
  ArtifactStore,
  AuditEntry,
  BodyRef,
  BodyStore,
  BatchRecord,
  ControlRequest,
  CorruptTask,
  JournalEntry,
  JournalEntryInput,
  JournalLimits,
  JournalSummary,
  Lease,
  NewTaskAttributes,
  Revisions,
  StatusChanges,
  StatsQuery,
  StoreStats,
  StoreOptions,
  StoreSignal,
  TaskChanges,
  TaskCountFilter,
  TaskFilter,
  TaskInput,
  TaskPatch,
  TaskRecord,
  TaskStore,
  UsageRequest,
  UsageStore,
  UsageTaken,
  WorkspaceFile,
} from '../../spec/index.ts';
import { toTaskRecord } from '../rows.ts';
import { listArtifacts, readArtifact, replaceArtifacts } from './pg-artifacts.ts';
import { readVerifiedAudit } from './pg-audit.ts';
import { putBody, readBody, sweepUploads } from './pg-bodies.ts';
import { readChangeRows, readStatusChangeRows } from './pg-changes.ts';
import type { ClaimOptions } from './pg-claim.ts';
import { claimReadable } from './pg-claim.ts';
import { AppendQueue } from './pg-append-queue.ts';
import { PgNotifier } from './pg-notifier.ts';
import { appendCalls, appendFast } from './pg-append.ts';
import type { AppendCall, AppendOutcome, AppendState } from './pg-append.ts';
import { entriesWithin, readSummary, readVerifiedJournal, saveSummary } from './pg-journal.ts';
import { transaction } from './pg-sql.ts';
import type { PgStoreOptions } from './pg-store-base.ts';
import { assertLeaseRow, expireLeasesOf, releaseLeaseRow, renewLeaseRow } from './pg-leases.ts';
import { countTaskRows, listTaskRows, readRevisions } from './pg-list-tasks.ts';
import { readStatsRows } from './pg-stats.ts';
import type { Sql } from './pg-sql.ts';
import { PgServiceStore } from './pg-service-store.ts';
import { createBatchRows, createTaskRows, findTaskRow, getTaskRow, readBatch } from './pg-tasks.ts';
import { controlRequestsOf, requestControlOf, updateTaskRow } from './pg-update.ts';
import { takeUsageRows } from './pg-usage.ts';

/**
 * TaskStore and ArtifactStore (and, inherited, ServiceStore) on PostgreSQL (ADR 0042), for several nodes on one
 * database. Each method is one transaction on a pooled connection; a task's writers take its row lock, claims take
 * turns on an advisory lock, and the database itself refuses a journal entry that does not chain or is written
 * under a stale fencing token.
 */
/** Tasks whose journal head a node remembers at most (a lease holder's running tasks are far fewer). */
const MAX_REMEMBERED_HEADS = 10_000;

export class PostgresTaskStore
  extends PgServiceStore
  implements TaskStore, ArtifactStore, BodyStore, UsageStore
{
  readonly #appends = new AppendQueue((taskId, calls) => this.#commitAppends(taskId, calls));
  /** What this node knows of the tasks it appends to (the fast path's memory, ADR 0042). */
  readonly #heads = new Map<string, AppendState>();
  readonly #notifier: PgNotifier;

  /** `listener` opens the dedicated connection that LISTENs for the other nodes' signals. */
  constructor(pool: pg.Pool, options: PgStoreOptions & { listener: () => pg.Client }) {
    super(pool, options);
    this.#notifier = new PgNotifier({
      connect: options.listener,
      channel: `codecall_${options.schema}`,
      notify: (channel, payload) => pool.query('SELECT pg_notify($1, $2)', [channel, payload]),
    });
  }

  /** One batch of a task's appends: the fast path when this node remembers the task, else the slow one. */
  async #commitAppends(taskId: string, calls: readonly AppendCall[]): Promise<AppendOutcome[]> {
    const known = this.#heads.get(taskId);
    this.#heads.delete(taskId);
    const fast = known === undefined ? null : await appendFast(this.pool, taskId, calls, known);
    const { outcomes, after } =
      fast ?? (await transaction(this.pool, (sql) => appendCalls(sql, taskId, calls)));
    if (after !== null) {
      if (this.#heads.size >= MAX_REMEMBERED_HEADS) this.#heads.clear();
      this.#heads.set(taskId, after);
    }
    // Streams on other nodes follow this task's journal: tell them (throttled; status changes tell themselves).
    this.#notifier.changed();
    return outcomes;
  }

  watch(listener: (signal: StoreSignal) => void): () => void {
    return this.#notifier.watch(listener);
  }

  createTask(
    input: TaskInput,
    options: StoreOptions & {
      id?: string;
      now?: number;
      idempotency?: { readonly key: string; readonly requestHash: string };
      attributes?: NewTaskAttributes;
      actor?: string;
    } = {},
  ): Promise<TaskRecord> {
    return this.keyed(options, (sql, key, now) => createTaskRows(sql, key, input, options, now));
  }

  createBatch(
    tasks: readonly { readonly input: TaskInput; readonly attributes?: NewTaskAttributes }[],
    options: StoreOptions & {
      tenant: string;
      callbackUrl?: string | null;
      id?: string;
      now?: number;
      actor?: string;
    },
  ): Promise<{ batch: BatchRecord; tasks: TaskRecord[] }> {
    return this.keyed(options, (sql, key, now) => createBatchRows(sql, key, tasks, options, now));
  }

  getBatch(id: string, options: StoreOptions = {}): Promise<BatchRecord | null> {
    return this.#tx(options.signal, (sql) => readBatch(sql, id));
  }

  readAudit(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number } = {},
  ): Promise<AuditEntry[]> {
    return this.#tx(options.signal, async (sql) => {
      await getTaskRow(sql, taskId);
      return readVerifiedAudit(sql, taskId, Math.max(0, options.afterSeq ?? 0), options.limit);
    });
  }

  getTask(id: string, options: StoreOptions = {}): Promise<TaskRecord | null> {
    return this.#one(options.signal, async (sql) => {
      const row = await findTaskRow(sql, id);
      return row === undefined ? null : toTaskRecord(row);
    });
  }

  countTasks(filter: TaskCountFilter = {}, options: StoreOptions = {}): Promise<number> {
    return this.#one(options.signal, (sql) => countTaskRows(sql, filter));
  }

  listTasks(
    filter: TaskFilter = {},
    options: StoreOptions = {},
  ): Promise<{ tasks: TaskRecord[]; nextCursor: string | null; corrupt: CorruptTask[] }> {
    return this.#one(options.signal, (sql) => listTaskRows(sql, filter));
  }

  readChanges(options: StoreOptions & { after: number | null; limit?: number }): Promise<TaskChanges> {
    return this.#tx(options.signal, (sql) => readChangeRows(sql, options.after, options.limit));
  }

  readStatusChanges(
    options: StoreOptions & { after: number | null; tenant?: string; limit?: number },
  ): Promise<StatusChanges> {
    return this.#one(options.signal, (sql) =>
      readStatusChangeRows(sql, {
        after: options.after,
        ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
        ...(options.limit === undefined ? {} : { limit: options.limit }),
      }),
    );
  }

  listRevisions(
    taskId: string,
    options: StoreOptions & { tenant: string; limit?: number },
  ): Promise<Revisions> {
    return this.#one(options.signal, (sql) =>
      readRevisions(sql, taskId, {
        tenant: options.tenant,
        ...(options.limit === undefined ? {} : { limit: options.limit }),
      }),
    );
  }

  readStats(query: StatsQuery, options: StoreOptions = {}): Promise<StoreStats> {
    return this.#tx(options.signal, (sql) => readStatsRows(sql, query));
  }

  appendJournal(
    taskId: string,
    entries: readonly JournalEntryInput[],
    options: StoreOptions & { fencingToken: number; now?: number; limits?: JournalLimits },
  ): Promise<JournalEntry[]> {
    const refused = this.refusal(options.signal);
    if (refused) return Promise.reject(refused);
    const call = {
      entries,
      fencingToken: options.fencingToken,
      limits: options.limits,
      now: options.now ?? Date.now(),
    };
    const { done, drained } = this.#appends.enqueue(taskId, call, options.signal);
    if (drained) this.track(drained);
    return done.catch((error: unknown) => {
      throw this.failure(error);
    });
  }

  putArtifacts(
    taskId: string,
    files: readonly WorkspaceFile[],
    options: StoreOptions & { fencingToken: number; now?: number },
  ): Promise<void> {
    return this.keyed(options, (sql, key, now) =>
      replaceArtifacts(sql, key, taskId, files, options.fencingToken, now),
    );
  }

  listArtifacts(taskId: string, options: StoreOptions = {}): Promise<ArtifactInfo[]> {
    return this.#one(options.signal, (sql) => listArtifacts(sql, taskId));
  }

  readArtifact(taskId: string, name: string, options: StoreOptions = {}): Promise<Uint8Array | null> {
    return this.#one(options.signal, (sql) => readArtifact(sql, taskId, name));
  }

  putBody(
    taskId: string,
    chunks: AsyncIterable<Uint8Array>,
    options: StoreOptions & { now?: number } = {},
  ): Promise<BodyRef> {
    const steps = {
      one: <T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>) => this.#one(signal, fn),
      tx: <T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>) => this.#tx(signal, fn),
    };
    return putBody(steps, taskId, chunks, options);
  }

  sweepUploads(taskId: string, options: StoreOptions = {}): Promise<number> {
    return this.#one(options.signal, (sql) => sweepUploads(sql, taskId));
  }

  readBody(
    taskId: string,
    sha256: string,
    options: StoreOptions & { offset: number; length: number },
  ): Promise<Uint8Array | null> {
    return this.#one(options.signal, (sql) => readBody(sql, taskId, sha256, options.offset, options.length));
  }

  readJournal(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number } = {},
  ): Promise<JournalEntry[]> {
    // One transaction (REPEATABLE READ): the anchor and the rows after it come from one snapshot.
    return this.#tx(options.signal, async (sql) => {
      await sql.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await getTaskRow(sql, taskId);
      return readVerifiedJournal(sql, taskId, Math.max(0, options.afterSeq ?? 0), options.limit);
    });
  }

  readJournalPage(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number; maxBytes: number },
  ): Promise<{ entries: JournalEntry[]; more: boolean }> {
    return this.#tx(options.signal, async (sql) => {
      await sql.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await getTaskRow(sql, taskId);
      const afterSeq = Math.max(0, options.afterSeq ?? 0);
      const { count, more } = await entriesWithin(sql, taskId, { ...options, afterSeq });
      return { entries: count === 0 ? [] : await readVerifiedJournal(sql, taskId, afterSeq, count), more };
    });
  }

  readJournalSummary(taskId: string, options: StoreOptions = {}): Promise<JournalSummary | null> {
    return this.#tx(options.signal, async (sql) => {
      await sql.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return readSummary(sql, taskId);
    });
  }

  saveJournalSummary(taskId: string, summary: JournalSummary, options: StoreOptions = {}): Promise<boolean> {
    return this.#tx(options.signal, (sql) => saveSummary(sql, taskId, summary));
  }

  updateTask(
    taskId: string,
    patch: TaskPatch,
    options: StoreOptions &
      ({ fencingToken: number } | { expectedVersion: number }) & {
        now?: number;
        append?: readonly JournalEntryInput[];
        actor?: string;
      },
  ): Promise<TaskRecord> {
    // Its entries (and a run's end) move the head this node may remember: the next append reads it again.
    this.#heads.delete(taskId);
    return this.keyed(options, (sql, key, now) => updateTaskRow(sql, key, taskId, patch, options, now));
  }

  claimTask(owner: string, options: StoreOptions & ClaimOptions & { now?: number }): Promise<Lease | null> {
    return this.keyed(options, (sql, key, now) => claimReadable(sql, key, owner, options, now));
  }

  requestControl(taskId: string, action: ControlRequest, options: StoreOptions = {}): Promise<TaskRecord> {
    return this.#tx(options.signal, (sql) => requestControlOf(sql, taskId, action));
  }

  listControlRequests(
    owner: string,
    options: StoreOptions = {},
  ): Promise<{ taskId: string; action: ControlRequest }[]> {
    return this.#one(options.signal, (sql) => controlRequestsOf(sql, owner));
  }

  renewLease(lease: Lease, options: StoreOptions & { leaseMs: number; now?: number }): Promise<Lease> {
    return this.#one(options.signal, (sql) =>
      renewLeaseRow(sql, lease, (options.now ?? Date.now()) + options.leaseMs),
    );
  }

  assertLease(lease: Lease, options: StoreOptions & { now?: number } = {}): Promise<void> {
    return this.#one(options.signal, (sql) => assertLeaseRow(sql, lease, options.now ?? Date.now()));
  }

  releaseLease(lease: Lease, options: StoreOptions = {}): Promise<void> {
    return this.#one(options.signal, (sql) => releaseLeaseRow(sql, lease));
  }

  expireLeases(
    isGone: (owner: string) => boolean,
    options: StoreOptions & { now?: number } = {},
  ): Promise<string[]> {
    return this.#tx(options.signal, (sql) => expireLeasesOf(sql, isGone, options.now ?? Date.now()));
  }

  /** A tenant's rate limit and quota on a tool (ADR 0045): upserts in one transaction, all or nothing. */
  takeUsage(request: UsageRequest, options: StoreOptions = {}): Promise<UsageTaken> {
    return this.#tx(options.signal, (sql) => takeUsageRows(sql, request));
  }

  protected override beforeClose(): void {
    this.#notifier.close();
  }

  #tx<T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.run(signal, fn);
  }

  /** One statement (or reads that need no common snapshot) straight on the pool: no BEGIN/COMMIT round trips. */
  #one<T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.run(signal, fn, true);
  }
}
