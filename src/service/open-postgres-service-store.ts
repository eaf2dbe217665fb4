import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { ArtifactStore, StoreHealthEvent, TaskStore } from '../spec/index.ts';
import { resolveGivenAuditKey } from '../store/audit-key-file.ts';
import { createPostgresTaskStore, redactUrl } from '../store/postgres/create-postgres-task-store.ts';
import type { PostgresTaskStoreOptions } from '../store/postgres/create-postgres-task-store.ts';
import { postgresAdvice } from '../store/postgres/pg-inspect.ts';
import { isServiceStore } from './service-database.ts';
import type { OpenedServiceStore, OpenServiceStoreOptions, ServiceDatabase } from './service-database.ts';
import { healthLine } from './store-health-log.ts';

/** Said at a start without a key: the operator should know the audit chain is not keyed then. */
export const NO_KEYED_AUDIT_LINE =
  'audit: no audit key given (CODECALL_AUDIT_KEY, CODECALL_AUDIT_KEY_FILE or auditKeyFile): the audit log is hash-chained and append-only in the database, but not keyed (ADR 0030); a PostgreSQL database has no key file beside it to make one in';

/**
 * Opens the service's store on PostgreSQL: connects, brings the schema up to date and checks that the store has
 * everything the service uses. A server that cannot be reached refuses the start (STORE_UNAVAILABLE): a node
 * that says it serves must be able to commit. The audit chain is keyed when a key is given (ADR 0030).
 */
export async function openPostgresServiceStore(
  url: string,
  log: (line: string) => void,
  options: OpenServiceStoreOptions,
): Promise<OpenedServiceStore> {
  // Every node must be given the same key (ADR 0030): there is no file beside a URL to find or make one in.
  const auditKey = await resolveGivenAuditKey(
    options.auditKeyFile ? { keyFile: options.auditKeyFile } : {},
  ).catch((e: unknown) => {
    const why = e instanceof Error ? e.message : String(e);
    throw new CodecallError('INVALID_CONFIG', `cannot read the audit key: ${why}`, {
      details: { field: 'auditKeyFile' },
      cause: e,
    });
  });
  let metrics: Metrics | undefined;
  let held: string[] | null = [];
  // onHealth is passed to a store that reports health (TaskStore.checkHealth) and ignored by one that does not.
  const storeOptions: PostgresTaskStoreOptions & { onHealth?: (event: StoreHealthEvent) => void } = {
    url,
    ...options.postgres,
    auditKey,
    onHealth: (event) => {
      metrics?.observeStoreHealth(event);
      const line = healthLine(event);
      if (line === null) return;
      if (held) held.push(line);
      else log(line);
    },
  };
  // Typed as the interfaces the store is known to have, so the check below still compiles once it has them all.
  const opened: TaskStore & ArtifactStore = await createPostgresTaskStore(storeOptions).catch(
    (e: unknown) => {
      // Unreachable is said with what to check (host, port, credentials, database), as `codecall doctor` says it.
      if (!isCodecallError(e) || e.code !== 'STORE_UNAVAILABLE') throw e;
      throw new CodecallError(
        'STORE_UNAVAILABLE',
        `refusing to serve: ${postgresAdvice(url, e.cause ?? e)}`,
        {
          details: e.details,
          cause: e,
        },
      );
    },
  );
  if (!isServiceStore(opened)) {
    await opened.close();
    throw new CodecallError(
      'STORE_UNAVAILABLE',
      'refusing to serve: this build of the PostgreSQL store keeps no API keys or webhook outbox (ServiceStore); serve on SQLite until it does',
      { details: { kind: 'unsupported', feature: 'ServiceStore', url: redactUrl(url) } },
    );
  }
  const store: ServiceDatabase = opened;
  const health = await store.checkHealth?.().catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  for (const line of held) log(line);
  held = null;
  if (auditKey === null) log(NO_KEYED_AUDIT_LINE);
  return {
    store,
    observeHealth: (m) => {
      metrics = m;
      for (const f of health?.faults ?? []) m.observeStoreHealth({ type: 'fault', fault: f });
    },
  };
}
