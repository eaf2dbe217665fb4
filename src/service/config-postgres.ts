import { z } from 'zod';

/** The PostgreSQL store's settings, used when `db` is a `postgres://` URL and ignored for SQLite. */
export const postgresConfigShape = {
  /** Connections each server keeps to PostgreSQL; the database's max_connections bounds the sum over servers. */
  postgresPoolSize: z.number().int().min(1).max(1000).default(10),
  /** A statement running longer is cancelled (STORE_ERROR), so a stuck query cannot hold a connection; 0: none. */
  postgresStatementTimeoutMs: z.number().int().min(0).max(3_600_000).default(30_000),
  /** The schema that holds codecall's tables (created at first start): several deployments can share a database. */
  postgresSchema: z
    .string()
    .regex(
      /^[a-z_][a-z0-9_]{0,62}$/,
      'must be a plain SQL name: lower-case letters, digits and _, at most 63',
    )
    .default('codecall'),
};
