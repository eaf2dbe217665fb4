import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { TaskStore } from '../spec/index.ts';
import { createPostgresTaskStore } from '../store/postgres/create-postgres-task-store.ts';
import { inspectPostgres, postgresAdvice } from '../store/postgres/pg-inspect.ts';
import { redactUrl } from '../store/postgres/pg-url.ts';

/** What `audit verify` checks on PostgreSQL: the chains; keyed audit and anchors are SQLite's (ADR 0025, 0030). */
export function refuseKeyedOnPostgres(options: { anchor?: string; key?: string; keyFile?: string }): void {
  const given = options.anchor !== undefined ? '--anchor' : options.key !== undefined ? '--key' : null;
  const flag = given ?? (options.keyFile !== undefined ? '--key-file' : null);
  if (flag === null) return;
  throw new CodecallError(
    'INVALID_ARGUMENT',
    `${flag}: keyed audit and anchors are not supported on PostgreSQL yet; without it, audit verify checks every journal and audit chain`,
    { details: { field: flag.slice(2) } },
  );
}

/**
 * Opens the PostgreSQL store to verify it, only when its schema exists at this codecall's version: verifying must
 * neither create an empty schema for a mistyped name (and call it intact) nor migrate one.
 */
export async function openPostgresForAudit(url: string, schema: string): Promise<TaskStore> {
  const found = await inspectPostgres({ url, schema }).catch((e: unknown) => {
    if (isCodecallError(e)) throw e;
    throw new CodecallError('STORE_UNAVAILABLE', postgresAdvice(url, e), { cause: e });
  });
  const where = `schema ${schema} at ${redactUrl(url)}`;
  if (found.schemaVersion === null) throw new CodecallError('NOT_FOUND', `no codecall ${where}`);
  if (found.schemaVersion !== found.supportedVersion) {
    const todo =
      found.schemaVersion > found.supportedVersion
        ? 'upgrade codecall'
        : 'start `codecall serve` once to migrate it';
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${where} is at version ${found.schemaVersion}, this codecall reads version ${found.supportedVersion}: ${todo}`,
    );
  }
  return createPostgresTaskStore({ url, schema, poolSize: 2 });
}
