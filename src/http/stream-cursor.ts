import type { FastifyRequest } from 'fastify';
import { CodecallError } from '../errors/index.ts';

/** A cursor is a journal seq: at most this many digits (a bound on what a client may send). */
const CURSOR = /^[0-9]{1,15}$/;

/**
 * Where a resumed task stream starts: the `Last-Event-ID` header (what EventSource sends on reconnect) or the
 * `after` query (for clients without EventSource); the header wins. Undefined for a fresh stream. A cursor that
 * is not a journal seq is a 400, before any SSE header is sent.
 */
export function streamCursor(
  request: FastifyRequest,
  after: string | undefined,
  /** What the cursor is, for the error (a task stream's: a journal seq). */
  what = 'a journal seq',
): number | undefined {
  const header = request.headers['last-event-id'];
  const raw = (Array.isArray(header) ? header[0] : header)?.trim() || after;
  if (raw === undefined) return undefined;
  if (!CURSOR.test(raw)) {
    throw new CodecallError(
      'BAD_REQUEST',
      `Last-Event-ID (or after) must be ${what}, as the stream sent it`,
      {
        details: { field: header === undefined ? 'after' : 'Last-Event-ID' },
      },
    );
  }
  return Number(raw);
}
