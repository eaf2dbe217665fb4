import { z } from 'zod';

/** The PostgreSQL store's settings, used when `db` is a `postgres://` URL and ignored for SQLite. */
export const postgresConfigShape = {
  /** Connections each server keeps to PostgreSQL; the database's max_connections bounds the sum over servers. */
  postgresPoolSize: z.number().int().min(1).max(1000).default(10),
  /** A statement running longer is cancelled (STORE_ERROR), so a stuck query cannot hold a connection; 0: none. */
  postgresStatementTimeoutMs: z.number().int().min(0).max(3_600_000).default(30_000),
  /**
   * A transaction a server leaves open this long (a process stopped mid-transaction) is ended by PostgreSQL, which
   * frees the locks claims wait on; keep it below the lease. 0: never.
   */
  postgresIdleInTransactionTimeoutMs: z.number().int().min(0).max(3_600_000).default(5000),
  /** The schema that holds codecall's tables (created at first start): several deployments can share a database. */
  postgresSchema: z
    .string()
    .regex(
      /^[a-z_][a-z0-9_]{0,53}$/,
      'must be a plain SQL name: lower-case letters, digits and _, at most 54 (its notification channel is codecall_<schema>)',
    )
    .default('codecall'),
};
