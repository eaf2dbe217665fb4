import { z } from 'zod';

/** How long a client may take and how many connections it may hold (issue 17: a hostile tenant or stranger). */
export const connectionsConfigShape = {
  /** Longest a whole request (headers and body) may take to arrive, in ms; default 30000. Streams are responses: not bound. */
  requestTimeoutMs: z.number().int().min(100).max(3_600_000).default(30_000),
  /** Longest the request headers may take to arrive, in ms; default 10000 (at most requestTimeoutMs). */
  headersTimeoutMs: z.number().int().min(100).max(3_600_000).default(10_000),
  /** How long an idle keep-alive connection stays open, in ms; default 5000. */
  keepAliveTimeoutMs: z.number().int().min(100).max(600_000).default(5_000),
  /** Connections open at once (streams included); default 1024. Beyond it a connection gets 503 and is closed. */
  maxConnections: z.number().int().min(1).max(1_000_000).default(1024),
  /** Connections open at once from one client IP (loopback too); default 128. */
  maxConnectionsPerIp: z.number().int().min(1).max(1_000_000).default(128),
};
