import { CodecallError } from '../../errors/index.ts';
import type { StoreHealthEvent } from '../../spec/index.ts';
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
  readonly signal?: AbortSignal;
}

/**
 * Opens (creating if needed) and migrates a SQLite task store. A file that cannot be opened for a reason an
 * operator fixes (read-only, missing directory, full disk, damaged) is STORE_UNAVAILABLE, saying what to do.
 */
export function createSqliteTaskStore(options: SqliteTaskStoreOptions): Promise<SqliteTaskStore> {
  if (options.signal?.aborted) {
    return Promise.reject(new CodecallError('ABORTED', 'Opening the task store was aborted'));
  }
  const { path } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  try {
    const db = openConnection(path, busyTimeoutMs);
    return Promise.resolve(
      new SqliteTaskStore(db, {
        path,
        busyTimeoutMs,
        healthCacheMs: options.healthCacheMs ?? 1000,
        // A fresh connection is how a read-only episode ends: SQLite never makes a read-only one writable.
        ...(path === ':memory:' || path === '' ? {} : { reopen: () => openConnection(path, busyTimeoutMs) }),
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
