import { CodecallError } from '../errors/index.ts';
import { isPostgresUrl, redactUrl } from '../store/postgres/create-postgres-task-store.ts';
import { migrateSqliteToPostgres } from '../store/postgres/migrate-from-sqlite.ts';
import type { MigrateProgress } from '../store/postgres/migrate-from-sqlite.ts';
import type { CliIo } from './cli-io.ts';

export interface MigrateCommandOptions {
  readonly from: string;
  readonly to: string;
  readonly schema?: string;
  readonly json?: boolean;
}

/** How often a long copy says how far it is. */
const PROGRESS_EVERY_MS = 2000;

/**
 * `codecall migrate --from tasks.db --to postgres://...`: copies a SQLite task database into an empty PostgreSQL
 * schema in one transaction and checks every table read back (migrate-from-sqlite.ts). The SQLite file is only
 * read; on any failure nothing is committed.
 */
export async function migrateCommand(
  options: MigrateCommandOptions,
  io: CliIo,
  signal?: AbortSignal,
): Promise<number> {
  if (!isPostgresUrl(options.to)) {
    throw new CodecallError('INVALID_ARGUMENT', '--to must be a postgres:// (or postgresql://) URL', {
      details: { field: 'to' },
    });
  }
  let said = 0;
  const progress = (p: MigrateProgress): void => {
    const now = Date.now();
    if (p.copied < p.total && now - said < PROGRESS_EVERY_MS) return;
    said = now;
    if (!options.json)
      io.stderr(
        `migrate: ${p.table} ${p.copied.toLocaleString('en')}/${p.total.toLocaleString('en')} rows\n`,
      );
  };
  const report = await migrateSqliteToPostgres({
    from: options.from,
    url: options.to,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    onProgress: progress,
    ...(signal ? { signal } : {}),
  });
  if (options.json) {
    io.stdout(`${JSON.stringify({ ok: true, to: redactUrl(options.to), ...report })}\n`);
    return 0;
  }
  const rows = report.tables.reduce((n, t) => n + t.rows, 0);
  io.stdout(
    `copied ${rows.toLocaleString('en')} rows of ${report.tables.length} tables from ${options.from} into schema ${report.schema} on ${redactUrl(options.to)}; every table read back identical\n`,
  );
  for (const t of report.tables)
    io.stdout(`  ${t.name.padEnd(18)} ${String(t.rows).padStart(9)}  sha256 ${t.sha256.slice(0, 16)}\n`);
  return 0;
}
