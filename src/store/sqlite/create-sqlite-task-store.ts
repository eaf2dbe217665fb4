import Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { migrate } from './migrations.ts';
import { toStoreError } from './sqlite-errors.ts';
import { SqliteTaskStore } from './sqlite-task-store.ts';

export interface SqliteTaskStoreOptions {
  /** A file path, or ':memory:' (one connection only, so no cross-process claims). */
  readonly path: string;
  /** How long a writer waits for another connection's lock before SQLITE_BUSY. Default 5000. */
  readonly busyTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Opens (creating if needed) and migrates a SQLite task store. */
export function createSqliteTaskStore(options: SqliteTaskStoreOptions): Promise<SqliteTaskStore> {
  if (options.signal?.aborted) {
    return Promise.reject(new CodecallError('ABORTED', 'Opening the task store was aborted'));
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    // WAL lets readers run beside the one writer; FULL fsyncs each commit (an entry is durable before its effect).
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return Promise.resolve(new SqliteTaskStore(db));
  } catch (error) {
    db?.close();
    return Promise.reject(toStoreError(error));
  }
}
