import { CodecallError } from '../../errors/index.ts';

/** Maps anything thrown inside the store to a CodecallError (STORE_ERROR, retryable as its row says). */
export function toStoreError(error: unknown): CodecallError {
  if (error instanceof CodecallError) return error;
  const sqliteCode = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof sqliteCode === 'string' && sqliteCode.startsWith('SQLITE_')) {
    return new CodecallError('STORE_ERROR', `SQLite: ${error.message}`, {
      details: { sqliteCode },
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new CodecallError('STORE_ERROR', message, { cause: error });
}
