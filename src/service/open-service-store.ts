import { CodecallError } from '../errors/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { createSqliteTaskStore, resolveAuditKey } from '../store/index.ts';
import { isPostgresUrl } from '../store/postgres/pg-url.ts';
import type { OpenedServiceStore, OpenServiceStoreOptions } from './service-database.ts';
import { healthLine } from './store-health-log.ts';

/**
 * Opens the service's database: an SQLite file, or PostgreSQL for a `postgres://` URL (its client is loaded
 * only then).
 */
export async function openServiceStore(
  db: string,
  log: (line: string) => void,
  options: OpenServiceStoreOptions = {},
): Promise<OpenedServiceStore> {
  if (!isPostgresUrl(db)) return openSqliteServiceStore(db, log, options);
  const { openPostgresServiceStore } = await import('./open-postgres-service-store.ts');
  return openPostgresServiceStore(db, log, options);
}

/**
 * Opens the service's store, which logs each fault once (with what to do) and its recovery once. A server must
 * not say it serves on a database it cannot write: a read-only or unopenable file refuses the start with
 * STORE_UNAVAILABLE; a full disk or a busy lock may clear by itself, so then the server starts, not ready.
 */
async function openSqliteServiceStore(
  path: string,
  log: (line: string) => void,
  options: OpenServiceStoreOptions,
): Promise<OpenedServiceStore> {
  let metrics: Metrics | undefined;
  // What the start's own probe finds is logged only if the start goes on (a refusal says it once).
  let held: string[] | null = [];
  // The audit chain is keyed (ADR 0030): a first start makes the key beside the database, never inside it.
  const memory = path === ':memory:' || path === '';
  // A key that cannot be made (a read-only directory) is reported after the store's own refusal, which says more.
  let keyError: unknown = null;
  const auditKey = memory
    ? null
    : await resolveAuditKey({
        db: path,
        create: true,
        note: (text) => log(text.trimEnd()),
        ...(options.auditKeyFile ? { keyFile: options.auditKeyFile } : {}),
      }).catch((e: unknown) => {
        keyError = e;
        return null;
      });
  const store = await createSqliteTaskStore({
    path,
    auditKey,
    onHealth: (event) => {
      metrics?.observeStoreHealth(event);
      const line = healthLine(event);
      if (line === null) return;
      if (held) held.push(line);
      else log(line);
    },
  });
  const health = await store.checkHealth().catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  const fault = health.faults.find((f) => f.kind === 'read_only' || f.kind === 'cannot_open');
  if (fault) {
    await store.close();
    throw new CodecallError('STORE_UNAVAILABLE', `refusing to serve: ${fault.message}`, {
      details: { kind: fault.kind, sqliteCode: fault.code, path },
    });
  }
  if (keyError !== null) {
    await store.close();
    const why = keyError instanceof Error ? keyError.message : 'unknown error';
    throw new CodecallError(
      'STORE_UNAVAILABLE',
      `refusing to serve: cannot read or create the audit key: ${why}`,
      {
        details: { kind: 'audit_key', path },
        cause: keyError,
      },
    );
  }
  for (const line of held) log(line);
  held = null;
  return {
    store,
    observeHealth: (m) => {
      metrics = m;
      for (const f of health.faults) m.observeStoreHealth({ type: 'fault', fault: f });
    },
  };
}
