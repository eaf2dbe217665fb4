import { z } from 'zod';

/** The event streams' bounds (GET /api/v1/tasks/{id}/stream and GET /api/v1/task-events), per process. */
export const streamConfigShape = {
  /** Bytes one stream may hold written but unflushed (default 1 MiB); a stream over it is ended. */
  streamBufferBytes: z
    .number()
    .int()
    .min(4096)
    .max(1024 ** 3)
    .default(1024 * 1024),
  /** Streams one API key may hold open at once (default 16); one more is refused TOO_MANY_STREAMS (429). */
  maxStreamsPerKey: z.number().int().min(1).max(100_000).default(16),
  /** Streams one tenant's keys may hold open at once (default 64); one more is refused TOO_MANY_STREAMS (429). */
  maxStreamsPerTenant: z.number().int().min(1).max(100_000).default(64),
};
