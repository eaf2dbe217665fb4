import { existsSync } from 'node:fs';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { ServiceStore, TaskStore } from '../spec/index.ts';
import { createSqliteTaskStore, resolveAuditKey } from '../store/index.ts';
import { isPostgresUrl, redactUrl } from '../store/postgres/pg-url.ts';

/** What a command that reads the SQLite file directly says of a PostgreSQL URL: what it is and what to use. */
export interface PostgresRefusal {
  /** The command or feature, e.g. `codecall keys`. */
  readonly feature: string;
  /** What to do instead. */
  readonly instead: string;
}

const TASKS_ON_POSTGRES: PostgresRefusal = {
  feature: 'codecall tasks, exec and run with --db',
  instead: 'run `codecall serve --db URL` and use `codecall tasks ... --url http://HOST:PORT --key KEY`',
};

/**
 * Opens the --db SQLite task store. `mustExist` (every `tasks` command) refuses to create a new, empty file for
 * a mistyped path. Its audit appends are keyed like `serve`'s (ADR 0030): the key is found (CODECALL_AUDIT_KEY,
 * CODECALL_AUDIT_KEY_FILE, `<db>.audit-key`) and, unless `auditKey` is 'none' (tools that only read), made in
 * `<db>.audit-key` (0600) when there is none.
 */
export async function openTaskDb(
  path: string,
  mustExist: boolean,
  options: { auditKey?: 'create' | 'none'; postgres?: PostgresRefusal } = {},
): Promise<TaskStore & ServiceStore> {
  if (isPostgresUrl(path)) {
    const { feature, instead } = options.postgres ?? TASKS_ON_POSTGRES;
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${feature}: not supported on PostgreSQL (${redactUrl(path)}) yet, only on an SQLite file; ${instead}`,
      { details: { field: 'db', feature } },
    );
  }
  if (mustExist && !existsSync(path)) {
    throw new CodecallError('NOT_FOUND', `no task database at ${path}`);
  }
  try {
    const memory = path === ':memory:' || path === '';
    const auditKey =
      options.auditKey === 'none' || memory ? null : await resolveAuditKey({ db: path, create: true });
    return await createSqliteTaskStore({ path, auditKey });
  } catch (e) {
    // A replaced audit key is its own finding (ADR 0030), not a bad path.
    if (isCodecallError(e) && e.code === 'AUDIT_KEY_MISMATCH') throw e;
    const message = isCodecallError(e) || e instanceof Error ? e.message : String(e);
    throw new CodecallError('INVALID_ARGUMENT', `cannot open task database ${path}: ${message}`, {
      cause: e,
    });
  }
}
