// The PostgreSQL step of large bodies out of line (ADR 0046), as SQLite's step 19: a body is a row of `bodies`
// (named by its digest within its task) over rows of `body_chunks` of a fixed size, written under an upload id
// before the digest is known; a put that failed or was cut by a crash leaves chunks no `bodies` row names, deleted
// with the task. Self-contained: it depends on nothing but `tasks`.

export const SCHEMA_BODIES = `
CREATE TABLE bodies (
  task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  sha256 text NOT NULL,
  size bigint NOT NULL,
  chunk_bytes integer NOT NULL,
  upload text NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (task_id, sha256)
);
CREATE TABLE body_chunks (
  task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  upload text NOT NULL,
  n integer NOT NULL CHECK (n >= 0),
  data bytea NOT NULL,
  PRIMARY KEY (task_id, upload, n)
);
`;
