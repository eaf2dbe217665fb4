/**
 * The SQLite step of large bodies out of line (ADR 0046): a body is a row of `bodies` (named by its digest within
 * its task) over rows of `body_chunks` of a fixed size, written under an upload id before the digest is known; a
 * put that failed or was cut by a crash leaves chunks no `bodies` row names, deleted with the task.
 */
export const SQLITE_BODIES_STEP = `
  CREATE TABLE bodies (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    chunk_bytes INTEGER NOT NULL,
    upload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, sha256)
  ) STRICT;
  CREATE TABLE body_chunks (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    upload TEXT NOT NULL,
    n INTEGER NOT NULL CHECK (n >= 0),
    data BLOB NOT NULL,
    PRIMARY KEY (task_id, upload, n)
  ) STRICT;
  `;
