import { CodecallError } from '../../errors/index.ts';

/** SQLSTATEs of a transaction PostgreSQL gave up so that another could go on: run it again. */
export const RETRY_STATES = new Set(['40001', '40P01']);

/** SQLSTATE classes of a server that cannot be reached or is going away (the pool reconnects). */
const UNAVAILABLE_CLASSES = ['08', '57P', '53'];

export function sqlStateOf(error: unknown): string | null {
  for (let e: unknown = error; e !== null && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return null;
}

/** Maps anything thrown by the client or the server to a CodecallError. */
export function toPgStoreError(error: unknown): CodecallError {
  if (error instanceof CodecallError) return error;
  const state = sqlStateOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (state === 'CC409') {
    return new CodecallError('FENCED', message, { details: { sqlState: state }, cause: error });
  }
  if (state === '57014') {
    return new CodecallError('STORE_ERROR', `PostgreSQL: statement timed out (${message})`, {
      details: { sqlState: state },
      cause: error,
    });
  }
  const code = (error as { code?: unknown } | null)?.code;
  const network =
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH)$/.test(code);
  if (network || (state !== null && UNAVAILABLE_CLASSES.some((c) => state.startsWith(c)))) {
    return new CodecallError('STORE_UNAVAILABLE', `PostgreSQL is unavailable: ${message}`, {
      details: { sqlState: state ?? code },
      cause: error,
    });
  }
  if (/Connection terminated|connection timeout|Client has encountered a connection error/i.test(message)) {
    return new CodecallError('STORE_UNAVAILABLE', `PostgreSQL is unavailable: ${message}`, { cause: error });
  }
  return new CodecallError('STORE_ERROR', `PostgreSQL: ${message}`, {
    ...(state === null ? {} : { details: { sqlState: state } }),
    cause: error,
  });
}
