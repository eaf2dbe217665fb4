import { existsSync } from 'node:fs';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { ServiceStore, TaskStore } from '../spec/index.ts';
import { createSqliteTaskStore } from '../store/index.ts';

/**
 * Opens the --db SQLite task store. `mustExist` (every `tasks` command) refuses to create a new, empty file for
 * a mistyped path.
 */
export async function openTaskDb(path: string, mustExist: boolean): Promise<TaskStore & ServiceStore> {
  if (mustExist && !existsSync(path)) {
    throw new CodecallError('NOT_FOUND', `no task database at ${path}`);
  }
  try {
    return await createSqliteTaskStore({ path });
  } catch (e) {
    const message = isCodecallError(e) || e instanceof Error ? e.message : String(e);
    throw new CodecallError('INVALID_ARGUMENT', `cannot open task database ${path}: ${message}`, {
      cause: e,
    });
  }
}
