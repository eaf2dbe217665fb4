import { CodecallError } from '../errors/index.ts';
import { resolveGivenAuditKey, verifyStore } from '../store/index.ts';
import type { KeyedAuditReport, StoreIntegrity } from '../store/index.ts';

export interface PostgresAuditOptions {
  /** The server's postgres:// URL. */
  readonly db: string;
  readonly schema?: string;
  readonly key?: string;
  readonly keyFile?: string;
  readonly anchor?: string;
}

/**
 * What `audit verify --db postgres://...` checks: the unkeyed chains through a store on the schema (as for SQLite)
 * and, given a key, the keyed chain (ADR 0030). The key cannot be found beside a server: it comes from --key,
 * --key-file, CODECALL_AUDIT_KEY or CODECALL_AUDIT_KEY_FILE. Only read (a store open runs no step on a current
 * schema), and a schema codecall never made is refused rather than created.
 */
export async function verifyPostgresDb(
  options: PostgresAuditOptions,
): Promise<{ report: StoreIntegrity; keyed: KeyedAuditReport | null }> {
  if (options.anchor !== undefined)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      '--anchor is for SQLite databases (no anchor of a PostgreSQL schema)',
      {
        details: { field: 'anchor' },
      },
    );
  const key = await resolveGivenAuditKey(options);
  const { createPostgresTaskStore } = await import('../store/postgres/create-postgres-task-store.ts');
  const { assertPostgresSchema, verifyPostgresAudit } = await import('../store/postgres/pg-verify-audit.ts');
  const schema = options.schema ?? 'codecall';
  await assertPostgresSchema({ url: options.db, schema });
  const store = await createPostgresTaskStore({ url: options.db, schema, auditKey: null, poolSize: 2 });
  let report: StoreIntegrity;
  try {
    report = await verifyStore(store);
  } finally {
    await store.close();
  }
  const keyed = key === null ? null : await verifyPostgresAudit({ url: options.db, schema, key });
  return { report, keyed };
}
