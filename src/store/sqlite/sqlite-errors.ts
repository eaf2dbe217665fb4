import { CodecallError } from '../../errors/index.ts';

/** Maps anything thrown inside the store to a CodecallError; SQLite busy/locked is retryable. */
export function toStoreError(error: unknown): CodecallError {
  if (error instanceof CodecallError) return error;
  const sqliteCode = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof sqliteCode === 'string' && sqliteCode.startsWith('SQLITE_')) {
    const retryable = sqliteCode.startsWith('SQLITE_BUSY') || sqliteCode.startsWith('SQLITE_LOCKED');
    return new CodecallError('STORE_ERROR', `SQLite: ${error.message}`, {
      details: { sqliteCode },
      cause: error,
      retryable,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new CodecallError('STORE_ERROR', message, { cause: error });
}
