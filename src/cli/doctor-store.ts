import { isCodecallError } from '../errors/index.ts';
import { loadConfig } from '../service/config.ts';
import { inspectPostgres, MIN_POSTGRES_MAJOR, postgresAdvice } from '../store/postgres/pg-inspect.ts';
import { isPostgresUrl, redactUrl } from '../store/postgres/pg-url.ts';

export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  /** Works, with something missing that programs may want (not a failure: the exit code does not change). */
  readonly warning?: boolean;
}

/**
 * The configured database, found as `serve` finds it (--db, CODECALL_DB, the --config file): for PostgreSQL, a
 * connection and the versions of the server and of codecall's schema, read without changing anything. An SQLite
 * file needs no check here (null); a config `serve` would refuse is a failed check of its own.
 */
export async function storeCheck(
  options: { readonly db?: string; readonly config?: string },
  env: Readonly<Record<string, string | undefined>>,
): Promise<DoctorCheck | null> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({
      env,
      ...(options.db === undefined ? {} : { flags: { db: options.db } }),
      ...(options.config === undefined ? {} : { file: options.config }),
    });
  } catch (e) {
    if (!isCodecallError(e)) throw e;
    return { name: 'config', ok: false, detail: e.message.replace(/^config /, '') };
  }
  if (!isPostgresUrl(config.db)) return null;
  const url = config.db;
  const schema = config.postgresSchema;
  try {
    const found = await inspectPostgres({ url, schema });
    const server = `PostgreSQL ${found.serverVersion} at ${redactUrl(url)}`;
    if (found.serverMajor < MIN_POSTGRES_MAJOR) {
      return {
        name: 'postgres',
        ok: false,
        detail: `${server}: codecall needs PostgreSQL ${MIN_POSTGRES_MAJOR} or newer: upgrade the server`,
      };
    }
    if (found.schemaVersion === null) {
      return {
        name: 'postgres',
        ok: true,
        detail: `${server}; schema ${schema} not created yet (the first \`codecall serve\` creates it, version ${found.supportedVersion})`,
      };
    }
    if (found.schemaVersion > found.supportedVersion) {
      return {
        name: 'postgres',
        ok: false,
        detail: `${server}; schema ${schema} is at version ${found.schemaVersion}, newer than this codecall supports (${found.supportedVersion}): upgrade codecall`,
      };
    }
    const behind =
      found.schemaVersion < found.supportedVersion
        ? ` (the next \`codecall serve\` migrates it to ${found.supportedVersion})`
        : '';
    return {
      name: 'postgres',
      ok: true,
      detail: `${server}; schema ${schema} at version ${found.schemaVersion}${behind}`,
    };
  } catch (e) {
    return { name: 'postgres', ok: false, detail: isCodecallError(e) ? e.message : postgresAdvice(url, e) };
  }
}
