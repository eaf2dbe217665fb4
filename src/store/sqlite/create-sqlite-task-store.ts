import { CodecallError } from '../../errors/index.ts';
import type { StoreHealthEvent } from '../../spec/index.ts';
import { resolveAuditKey } from '../audit-key-file.ts';
import { openConnection } from './open-connection.ts';
import { toStoreError } from './sqlite-errors.ts';
import { toStoreFault } from './store-faults.ts';
import { SqliteTaskStore } from './sqlite-task-store.ts';

export interface SqliteTaskStoreOptions {
  /** A file path, or ':memory:' (one connection only, so no cross-process claims). */
  readonly path: string;
  /** How long a writer waits for another connection's lock before SQLITE_BUSY. Default 5000. */
  readonly busyTimeoutMs?: number;
  /** How long a health probe's answer is reused, and the retry interval while faulted (ms). Default 1000. */
  readonly healthCacheMs?: number;
  /** Store faults as they come and go (see StoreHealthEvent): the service logs and counts them. */
  readonly onHealth?: (event: StoreHealthEvent) => void;
  /**
   * The audit key (ADR 0030), kept outside the database. Default: CODECALL_AUDIT_KEY, CODECALL_AUDIT_KEY_FILE or
   * `<path>.audit-key` when one exists; null: append unkeyed and never key the database (read-only tools).
   */
  readonly auditKey?: Buffer | null;
  readonly signal?: AbortSignal;
}

/**
 * Opens (creating if needed) and migrates a SQLite task store. A file that cannot be opened for a reason an
 * operator fixes (read-only, missing directory, full disk, damaged) is STORE_UNAVAILABLE, saying what to do.
 */
export async function createSqliteTaskStore(options: SqliteTaskStoreOptions): Promise<SqliteTaskStore> {
  if (options.signal?.aborted) {
    return Promise.reject(new CodecallError('ABORTED', 'Opening the task store was aborted'));
  }
  const { path } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const memory = path === ':memory:' || path === '';
  const auditKey =
    options.auditKey === undefined
      ? memory
        ? null
        : await resolveAuditKey({ db: path, create: false })
      : options.auditKey;
  const key = auditKey ?? undefined;
  try {
    const db = openConnection(path, busyTimeoutMs, key);
    return Promise.resolve(
      new SqliteTaskStore(db, {
        path,
        busyTimeoutMs,
        healthCacheMs: options.healthCacheMs ?? 1000,
        // A fresh connection is how a read-only episode ends: SQLite never makes a read-only one writable.
        ...(memory ? {} : { reopen: () => openConnection(path, busyTimeoutMs, key) }),
        ...(options.onHealth ? { onHealth: options.onHealth } : {}),
      }),
    );
  } catch (error) {
    const fault = toStoreFault(error, path, Date.now());
    if (fault === null || fault.kind === 'busy') return Promise.reject(toStoreError(error));
    return Promise.reject(
      new CodecallError('STORE_UNAVAILABLE', `cannot open the task store: ${fault.message}`, {
        details: { kind: fault.kind, sqliteCode: fault.code, path },
        cause: error,
      }),
    );
  }
}
