import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type {
  JournalLimits,
  ApiKeyRecord,
  ArtifactInfo,
  ArtifactStore,
  BodyRef,
  BodyStore,
  WorkspaceFile,
  AuditEntry,
  BatchRecord,
  ControlRequest,
  CorruptTask,
  KeyRole,
  NewTaskAttributes,
  ServiceStore,
  WebhookAttempt,
  WebhookCounts,
  WebhookMessage,
  JournalEntry,
  JournalEntryInput,
  JournalSummary,
  Lease,
  StoreHealth,
  StoreHealthEvent,
  StoreOptions,
  TaskChanges,
  Revisions,
  StatusChanges,
  StatsQuery,
  StoreStats,
  TaskCountFilter,
  TaskFilter,
  TaskInput,
  TaskPatch,
  TaskRecord,
  TaskStore,
  UsageRequest,
  UsageStore,
  UsageTaken,
} from '../../spec/index.ts';
import { toTaskRecord } from '../rows.ts';
import { GroupCommit } from './group-commit.ts';
import { toStoreError } from './sqlite-errors.ts';
import { faultKindOf } from './store-faults.ts';
import { probeCommit } from './store-probe.ts';
import { prepared } from './statement-cache.ts';
import { StoreHealthMonitor } from './store-health-monitor.ts';
import { appendEntries, entriesWithin, readVerifiedJournal } from './sqlite-journal.ts';
import { readVerifiedAudit } from './sqlite-audit.ts';
import { refreshHead } from './audit-keying.ts';
import { readSummary, saveSummary } from './sqlite-summary.ts';
import { readBatch } from './sqlite-batches.ts';
import { assertLeaseRow, expireLeasesOf, releaseLeaseRow, renewLeaseRow } from './sqlite-leases.ts';
import { claimReadable } from './claim-readable.ts';
import { assertFenced, findTaskRow, getTaskRow, getTokenRow, updateTaskRow } from './sqlite-update-task.ts';
import { controlRequestsOf, requestControlOf } from './sqlite-control-requests.ts';
import { listArtifacts, readArtifact, replaceArtifacts } from './sqlite-artifacts.ts';
import { putBody, readBody, sweepUploads } from './sqlite-bodies.ts';
import { createBatchRows, createTaskRows } from './sqlite-insert-task.ts';
import { taskWhere } from './task-where.ts';
import { listTaskRows } from './sqlite-list-tasks.ts';
import { readChangeRows, readStatusChangeRows } from './sqlite-changes.ts';
import { readRevisions } from './sqlite-revisions.ts';
import { readStatsRows } from './sqlite-stats.ts';
import * as service from './sqlite-service.ts';
import { takeUsageRows } from './sqlite-usage.ts';

/** How the store's connection came to be, so that it can check its health and open a new one. */
export interface SqliteConnectionOptions {
  /** The file (named in health messages). */
  readonly path?: string;
  /** Opens a fresh connection on the same file; without it (`:memory:`) the store never reconnects. */
  readonly reopen?: () => Database.Database;
  /** The connection's busy timeout (default 5000); a health probe waits at most 1 s of it. */
  readonly busyTimeoutMs?: number;
  /** How long a probe's answer is reused (ms). Default 1000. */
  readonly healthCacheMs?: number;
  readonly onHealth?: (event: StoreHealthEvent) => void;
}

/**
 * TaskStore on one SQLite file (better-sqlite3: synchronous, so each method is one atomic step). Journal appends
 * are group-committed (ADR 0009): those of one event-loop turn share one transaction and one fsync. Every other
 * method first commits the appends queued before it, so operations take effect in the order they were called.
 */
export class SqliteTaskStore implements TaskStore, ServiceStore, ArtifactStore, BodyStore, UsageStore {
  #db: Database.Database;
  #appends: GroupCommit;
  #closed = false;
  readonly #connection: SqliteConnectionOptions;
  readonly #health: StoreHealthMonitor;

  constructor(db: Database.Database, connection: SqliteConnectionOptions = {}) {
    this.#db = db;
    this.#connection = connection;
    this.#health = new StoreHealthMonitor({
      path: connection.path ?? db.name,
      probe: () => this.#probe(),
      cacheMs: connection.healthCacheMs ?? 1000,
      ...(connection.onHealth ? { onHealth: connection.onHealth } : {}),
    });
    this.#appends = this.#groupCommit(db);
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
    // Group-committed like journal appends: creations arriving together (many API requests) share one fsync.
    // GroupCommit runs each in a savepoint of its own, so a refused creation undoes only itself.
    const refused = this.#refuse(options.signal);
    if (refused) return refused;
    return this.#appends.enqueue(
      () => createTaskRows(this.#db, input, options, options.now ?? Date.now()),
      options.signal,
    );
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
    return this.#run(options.signal, () =>
      this.#db
        .transaction(() => createBatchRows(this.#db, tasks, options, options.now ?? Date.now()))
        .immediate(),
    );
  }

  /** A tenant's rate limit and quota on a tool (ADR 0045): one IMMEDIATE transaction, all or nothing. */
  takeUsage(request: UsageRequest, options: StoreOptions = {}): Promise<UsageTaken> {
    return this.#run(options.signal, () => takeUsageRows(this.#db, request));
  }

  getBatch(id: string, options: StoreOptions = {}): Promise<BatchRecord | null> {
    return this.#run(options.signal, () => readBatch(this.#db, id));
  }

  readAudit(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number } = {},
  ): Promise<AuditEntry[]> {
    return this.#run(options.signal, () =>
      this.#db.transaction((): AuditEntry[] => {
        getTaskRow(this.#db, taskId);
        return readVerifiedAudit(this.#db, taskId, Math.max(0, options.afterSeq ?? 0), options.limit);
      })(),
    );
  }

  getTask(id: string, options: StoreOptions = {}): Promise<TaskRecord | null> {
    return this.#run(options.signal, () => {
      const row = findTaskRow(this.#db, id);
      return row === undefined ? null : toTaskRecord(row);
    });
  }

  countTasks(filter: TaskCountFilter = {}, options: StoreOptions = {}): Promise<number> {
    return this.#run(options.signal, () => {
      const { where, params } = taskWhere(filter);
      // Status, tenant and batch counts search covering indexes (tasks_claim, tasks_by_tenant_status, tasks_by_batch).
      const sql = `SELECT COUNT(*) AS n FROM tasks${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
      return (prepared(this.#db, sql).get(...params) as { n: number }).n;
    });
  }

  listTasks(
    filter: TaskFilter = {},
    options: StoreOptions = {},
  ): Promise<{ tasks: TaskRecord[]; nextCursor: string | null; corrupt: CorruptTask[] }> {
    return this.#run(options.signal, () => listTaskRows(this.#db, filter));
  }

  readChanges(options: StoreOptions & { after: number | null; limit?: number }): Promise<TaskChanges> {
    return this.#run(options.signal, () => readChangeRows(this.#db, options.after, options.limit));
  }

  readStatusChanges(
    options: StoreOptions & { after: number | null; tenant?: string; limit?: number },
  ): Promise<StatusChanges> {
    return this.#run(options.signal, () =>
      readStatusChangeRows(this.#db, {
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
    return this.#run(options.signal, () =>
      readRevisions(this.#db, taskId, {
        tenant: options.tenant,
        ...(options.limit === undefined ? {} : { limit: options.limit }),
      }),
    );
  }

  readStats(query: StatsQuery, options: StoreOptions = {}): Promise<StoreStats> {
    return this.#run(options.signal, () => readStatsRows(this.#db, query));
  }

  appendJournal(
    taskId: string,
    entries: readonly JournalEntryInput[],
    options: StoreOptions & { fencingToken: number; now?: number; limits?: JournalLimits },
  ): Promise<JournalEntry[]> {
    const refused = this.#refuse(options.signal);
    if (refused) return refused;
    const now = options.now ?? Date.now();
    return this.#appends.enqueue((): JournalEntry[] => {
      assertFenced(getTokenRow(this.#db, taskId), options.fencingToken);
      return appendEntries(this.#db, taskId, entries, now, options.limits);
    }, options.signal);
  }

  putArtifacts(
    taskId: string,
    files: readonly WorkspaceFile[],
    options: StoreOptions & { fencingToken: number; now?: number },
  ): Promise<void> {
    const now = options.now ?? Date.now();
    return this.#run(options.signal, () =>
      this.#db.transaction(() => {
        assertFenced(getTokenRow(this.#db, taskId), options.fencingToken);
        replaceArtifacts(this.#db, taskId, files, now);
        // An ended task's head vouches for its artifacts (none written after its end today; kept true if one is).
        refreshHead(this.#db, taskId);
      })(),
    );
  }

  listArtifacts(taskId: string, options: StoreOptions = {}): Promise<ArtifactInfo[]> {
    return this.#run(options.signal, () => listArtifacts(this.#db, taskId));
  }

  readArtifact(taskId: string, name: string, options: StoreOptions = {}): Promise<Uint8Array | null> {
    return this.#run(options.signal, () => readArtifact(this.#db, taskId, name));
  }

  putBody(
    taskId: string,
    chunks: AsyncIterable<Uint8Array>,
    options: StoreOptions & { now?: number } = {},
  ): Promise<BodyRef> {
    return putBody((signal, fn) => this.#run(signal, () => fn(this.#db)), taskId, chunks, options);
  }

  sweepUploads(taskId: string, options: StoreOptions = {}): Promise<number> {
    return this.#run(options.signal, () => sweepUploads(this.#db, taskId));
  }

  readBody(
    taskId: string,
    sha256: string,
    options: StoreOptions & { offset: number; length: number },
  ): Promise<Uint8Array | null> {
    return this.#run(options.signal, () =>
      readBody(this.#db, taskId, sha256, options.offset, options.length),
    );
  }

  readJournal(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number } = {},
  ): Promise<JournalEntry[]> {
    return this.#run(options.signal, () => {
      const afterSeq = Math.max(0, options.afterSeq ?? 0);
      const db = this.#db;
      // One read transaction so the anchor and the rows after it come from the same snapshot.
      return db.transaction((): JournalEntry[] => {
        getTaskRow(this.#db, taskId);
        return readVerifiedJournal(db, taskId, afterSeq, options.limit);
      })();
    });
  }

  readJournalPage(
    taskId: string,
    options: StoreOptions & { afterSeq?: number; limit?: number; maxBytes: number },
  ): Promise<{ entries: JournalEntry[]; more: boolean }> {
    return this.#run(options.signal, () => {
      const afterSeq = Math.max(0, options.afterSeq ?? 0);
      const db = this.#db;
      return db.transaction(() => {
        getTaskRow(this.#db, taskId);
        const { count, more } = entriesWithin(db, taskId, { ...options, afterSeq });
        return { entries: count === 0 ? [] : readVerifiedJournal(db, taskId, afterSeq, count), more };
      })();
    });
  }

  readJournalSummary(taskId: string, options: StoreOptions = {}): Promise<JournalSummary | null> {
    return this.#run(options.signal, () => this.#db.transaction(() => readSummary(this.#db, taskId))());
  }

  saveJournalSummary(taskId: string, summary: JournalSummary, options: StoreOptions = {}): Promise<boolean> {
    return this.#run(options.signal, () =>
      this.#db.transaction(() => saveSummary(this.#db, taskId, summary)).immediate(),
    );
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
    return this.#run(options.signal, () =>
      this.#db
        .transaction(() => updateTaskRow(this.#db, taskId, patch, options, options.now ?? Date.now()))
        .immediate(),
    );
  }

  claimTask(
    owner: string,
    options: StoreOptions & {
      leaseMs: number;
      now?: number;
      taskId?: string;
      maxPerTenant?: number;
      tenantShare?: number;
      tenantReserve?: number;
      maxRunning?: number;
    },
  ): Promise<Lease | null> {
    // BEGIN IMMEDIATE takes the write lock before the SELECT, so two connections cannot pick the same row.
    return this.#run(options.signal, () =>
      this.#db
        .transaction(() => claimReadable(this.#db, owner, options, options.now ?? Date.now()))
        .immediate(),
    );
  }

  requestControl(taskId: string, action: ControlRequest, options: StoreOptions = {}): Promise<TaskRecord> {
    return this.#run(options.signal, () =>
      this.#db.transaction(() => requestControlOf(this.#db, taskId, action)).immediate(),
    );
  }

  listControlRequests(
    owner: string,
    options: StoreOptions = {},
  ): Promise<{ taskId: string; action: ControlRequest }[]> {
    return this.#run(options.signal, () => controlRequestsOf(this.#db, owner));
  }

  renewLease(lease: Lease, options: StoreOptions & { leaseMs: number; now?: number }): Promise<Lease> {
    return this.#run(options.signal, () =>
      renewLeaseRow(this.#db, lease, (options.now ?? Date.now()) + options.leaseMs),
    );
  }

  assertLease(lease: Lease, options: StoreOptions & { now?: number } = {}): Promise<void> {
    return this.#run(options.signal, () => assertLeaseRow(this.#db, lease, options.now ?? Date.now()));
  }

  releaseLease(lease: Lease, options: StoreOptions = {}): Promise<void> {
    return this.#run(options.signal, () => releaseLeaseRow(this.#db, lease));
  }

  expireLeases(
    isGone: (owner: string) => boolean,
    options: StoreOptions & { now?: number } = {},
  ): Promise<string[]> {
    return this.#run(options.signal, () => expireLeasesOf(this.#db, isGone, options.now ?? Date.now()));
  }

  createApiKey(
    key: { id: string; keyHash: string; tenant: string; role: KeyRole; name?: string | null },
    options: StoreOptions & { now?: number } = {},
  ): Promise<ApiKeyRecord> {
    return this.#run(options.signal, () => service.insertApiKey(this.#db, key, options.now ?? Date.now()));
  }

  findApiKey(keyHash: string, options: StoreOptions = {}): Promise<ApiKeyRecord | null> {
    return this.#run(options.signal, () => service.findApiKey(this.#db, keyHash));
  }

  listApiKeys(options: StoreOptions = {}): Promise<ApiKeyRecord[]> {
    return this.#run(options.signal, () => service.listApiKeys(this.#db));
  }

  revokedApiKeys(ids: readonly string[], options: StoreOptions = {}): Promise<string[]> {
    return this.#run(options.signal, () => service.revokedApiKeys(this.#db, ids));
  }

  revokeApiKey(id: string, options: StoreOptions & { now?: number } = {}): Promise<ApiKeyRecord> {
    return this.#run(options.signal, () => service.revokeApiKey(this.#db, id, options.now ?? Date.now()));
  }

  dueWebhooks(
    options: StoreOptions & { now: number; limit: number; claim?: { owner: string; leaseMs: number } },
  ): Promise<WebhookMessage[]> {
    return this.#run(options.signal, () =>
      service.dueWebhooks(this.#db, options.now, options.limit, options.claim),
    );
  }

  releaseWebhook(id: string, owner: string, options: StoreOptions = {}): Promise<void> {
    return this.#run(options.signal, () => service.releaseWebhook(this.#db, id, owner));
  }

  recordWebhookAttempt(
    id: string,
    attempt: WebhookAttempt & { readonly body: string },
    options: StoreOptions & { now?: number } = {},
  ): Promise<void> {
    return this.#run(options.signal, () =>
      service.recordWebhookAttempt(this.#db, id, attempt, options.now ?? Date.now()),
    );
  }

  webhookCounts(options: StoreOptions = {}): Promise<WebhookCounts> {
    return this.#run(options.signal, () => service.webhookCounts(this.#db));
  }

  nextWebhookAt(options: StoreOptions = {}): Promise<number | null> {
    return this.#run(options.signal, () => service.nextWebhookAt(this.#db));
  }

  checkHealth(options: StoreOptions & { probe?: boolean } = {}): Promise<StoreHealth> {
    return this.#run(options.signal, () => this.#health.check(options.probe !== false));
  }

  /** Commits the appends still queued (their promises settle as usual), then closes the file. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#health.close();
      this.#appends.flush();
      this.#db.close();
    }
    return Promise.resolve();
  }

  #run<T>(signal: AbortSignal | undefined, fn: () => T): Promise<T> {
    const refused = this.#refuse(signal);
    if (refused) return refused;
    this.#appends.flush();
    try {
      return Promise.resolve(fn());
    } catch (error) {
      this.#health.failed(error);
      return Promise.reject(toStoreError(error));
    }
  }

  #groupCommit(db: Database.Database): GroupCommit {
    return new GroupCommit(db, { onError: (error) => this.#health.failed(error) });
  }

  /**
   * The health probe (probeCommit). A connection opened while the file was read-only stays read-only for good,
   * so on a read-only (or unopenable) answer the store opens a fresh connection and probes again on it.
   */
  #probe(): void {
    this.#appends.flush();
    const { reopen, busyTimeoutMs: busyMs = 5000 } = this.#connection;
    // A reconnect that failed left the old connection closed: this probe tries again.
    if (!this.#db.open && reopen) this.#reconnect(reopen);
    try {
      probeCommit(this.#db, busyMs);
    } catch (error) {
      const kind = faultKindOf(error);
      if (reopen === undefined || (kind !== 'read_only' && kind !== 'cannot_open')) throw error;
      this.#reconnect(reopen);
      probeCommit(this.#db, busyMs);
    }
  }

  /**
   * SQLite shares a file's locks and shared memory between the connections of one process: a new connection
   * opened beside the read-only one would get its read-only -shm mapping, so the old one is closed first.
   */
  #reconnect(reopen: () => Database.Database): void {
    this.#appends.flush();
    if (this.#db.open) this.#db.close();
    this.#db = reopen();
    this.#appends = this.#groupCommit(this.#db);
  }

  #refuse(signal: AbortSignal | undefined): Promise<never> | undefined {
    if (this.#closed) return Promise.reject(new CodecallError('STORE_CLOSED', 'The task store is closed'));
    if (signal?.aborted)
      return Promise.reject(new CodecallError('ABORTED', 'The store operation was aborted'));
    return undefined;
  }
}
