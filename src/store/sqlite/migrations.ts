import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { SQLITE_BODIES_STEP } from './schema-bodies.ts';
import { SQLITE_ENDED_STEP } from '../stats-rows.ts';

/** Ordered schema steps; step i brings the database to version i + 1. Never edit a released step, append. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled')),
    pause_reason TEXT,
    input TEXT NOT NULL,
    result TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    fencing_token INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX tasks_by_created ON tasks (created_at, id);
  CREATE INDEX tasks_by_status_created ON tasks (status, created_at, id);
  CREATE TABLE journal (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL CHECK (seq > 0),
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) STRICT, WITHOUT ROWID;
  `,
  // 2: what a run leaves behind for the task view, control requests from other processes, wake-ups.
  `
  ALTER TABLE tasks ADD COLUMN execution_log TEXT;
  ALTER TABLE tasks ADD COLUMN resources TEXT;
  ALTER TABLE tasks ADD COLUMN requested_action TEXT CHECK (requested_action IN ('pause', 'cancel'));
  ALTER TABLE tasks ADD COLUMN wake_at INTEGER;
  CREATE INDEX tasks_by_wake ON tasks (wake_at) WHERE wake_at IS NOT NULL;
  CREATE INDEX tasks_by_requested ON tasks (lease_owner) WHERE requested_action IS NOT NULL;
  `,
  // 3: Idempotency-Key of task creation: the key, the request it was first used for, and the task it made.
  `
  CREATE TABLE idempotency_keys (
    key TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
  ) STRICT;
  `,
  // 4: the service. Where a task belongs (tenant, session, batch) and how the queue treats it (priority, retries,
  // deadline); batches; API keys (hashed); the webhook outbox, filled by triggers in the transaction of the status
  // change it reports; the per-task hash-chained audit log; journal and audit log made append-only.
  `
  ALTER TABLE tasks ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
  ALTER TABLE tasks ADD COLUMN session_id TEXT;
  ALTER TABLE tasks ADD COLUMN batch_id TEXT;
  ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tasks ADD COLUMN callback_url TEXT;
  ALTER TABLE tasks ADD COLUMN max_retries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tasks ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tasks ADD COLUMN run_after INTEGER;
  ALTER TABLE tasks ADD COLUMN deadline_at INTEGER;
  CREATE INDEX tasks_claim ON tasks (status, priority DESC, created_at, id);
  CREATE INDEX tasks_by_tenant ON tasks (tenant, created_at, id);
  CREATE INDEX tasks_by_tenant_status ON tasks (tenant, status);
  CREATE INDEX tasks_by_session ON tasks (tenant, session_id, created_at, id) WHERE session_id IS NOT NULL;
  CREATE INDEX tasks_by_batch ON tasks (batch_id, status) WHERE batch_id IS NOT NULL;
  CREATE INDEX tasks_by_deadline ON tasks (deadline_at) WHERE deadline_at IS NOT NULL;
  CREATE TABLE batches (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    callback_url TEXT,
    size INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    completed_at INTEGER
  ) STRICT;
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    name TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT;
  CREATE TABLE webhook_outbox (
    id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    task_id TEXT,
    batch_id TEXT,
    url TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    body TEXT,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    claimed_by TEXT,
    claimed_until INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
  ) STRICT;
  CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE state = 'pending';
  CREATE TRIGGER webhook_task_event AFTER UPDATE OF status ON tasks
    WHEN NEW.callback_url IS NOT NULL AND NEW.status <> OLD.status
      AND (NEW.status IN ('succeeded', 'failed', 'cancelled')
        OR (NEW.status = 'paused' AND coalesce(NEW.pause_reason, '') <> 'shutdown'))
  BEGIN
    INSERT INTO webhook_outbox (id, event, task_id, batch_id, url, snapshot, next_attempt_at, created_at)
    VALUES ('msg_' || lower(hex(randomblob(12))), 'task.' || NEW.status, NEW.id, NEW.batch_id, NEW.callback_url,
      json_object('status', NEW.status, 'pause_reason', NEW.pause_reason, 'error', json(NEW.error),
        'result', NEW.result, 'at', NEW.updated_at),
      NEW.updated_at, NEW.updated_at);
  END;
  CREATE TRIGGER webhook_batch_completed AFTER UPDATE OF status ON tasks
    WHEN NEW.batch_id IS NOT NULL AND NEW.status IN ('succeeded', 'failed', 'cancelled')
      AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.batch_id = NEW.batch_id
        AND t.status NOT IN ('succeeded', 'failed', 'cancelled'))
      AND EXISTS (SELECT 1 FROM batches b WHERE b.id = NEW.batch_id AND b.completed_at IS NULL)
  BEGIN
    UPDATE batches SET completed_at = NEW.updated_at WHERE id = NEW.batch_id;
    INSERT INTO webhook_outbox (id, event, batch_id, url, snapshot, next_attempt_at, created_at)
    SELECT 'msg_' || lower(hex(randomblob(12))), 'batch.completed', b.id, b.callback_url,
      json_object('at', NEW.updated_at), NEW.updated_at, NEW.updated_at
    FROM batches b WHERE b.id = NEW.batch_id AND b.callback_url IS NOT NULL;
  END;
  CREATE TABLE audit_log (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL CHECK (seq > 0),
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) STRICT, WITHOUT ROWID;
  CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
  CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
  CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  `,
  // 5: files a task's program left in its working directory (the last run's).
  `
  CREATE TABLE artifacts (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    data BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, name)
  ) STRICT, WITHOUT ROWID;
  `,
  // 6: the one row a health probe updates and commits (a full disk or a read-only file shows only on a commit).
  `
  CREATE TABLE store_probe (id INTEGER PRIMARY KEY CHECK (id = 1), probed_at INTEGER NOT NULL) STRICT;
  INSERT INTO store_probe (id, probed_at) VALUES (1, 0);
  `,
  // 7: every live runtime looks for tasks paused by a shutdown on each poll (partial: only paused rows carry it).
  `
  CREATE INDEX tasks_by_pause_reason ON tasks (pause_reason, created_at, id) WHERE pause_reason IS NOT NULL;
  `,
  // 8: the `approver` key role (SQLite cannot change a CHECK in place: the table is rebuilt, rows kept).
  `
  CREATE TABLE api_keys_v8 (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'member', 'approver')),
    name TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT;
  INSERT INTO api_keys_v8 SELECT id, key_hash, tenant, role, name, created_at, revoked_at FROM api_keys;
  DROP TABLE api_keys;
  ALTER TABLE api_keys_v8 RENAME TO api_keys;
  `,
  // 9: fair claiming (ADR 0023). The queue is walked tenant by tenant (pending tasks grouped by tenant, then one
  // tenant's by priority); tenant_turns remembers when each tenant was last served, so the turn goes round.
  `
  CREATE INDEX tasks_fair ON tasks (status, tenant, priority DESC, created_at, id);
  CREATE TABLE tenant_turns (tenant TEXT PRIMARY KEY, served INTEGER NOT NULL) STRICT, WITHOUT ROWID;
  `,
  // 10: the keyed audit chain (ADR 0030): per row what it vouches for of the task and its two MACs (NULL: a row
  // written unkeyed), the key's fingerprint (never the key) with a signed count of tasks, a signed head per task.
  `
  ALTER TABLE audit_log ADD COLUMN covers TEXT;
  ALTER TABLE audit_log ADD COLUMN data_mac TEXT;
  ALTER TABLE audit_log ADD COLUMN mac TEXT;
  CREATE TABLE audit_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT NOT NULL,
    keyed_at INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    tasks_sig TEXT NOT NULL
  ) STRICT;
  CREATE TABLE audit_heads (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    legacy_seq INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    mac TEXT NOT NULL,
    covers TEXT NOT NULL,
    sig TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // 11: a task's journal size, kept with each append, so its bound (ADR 0029) costs no scan; counted once here.
  `
  ALTER TABLE tasks ADD COLUMN journal_bytes INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tasks ADD COLUMN journal_entries INTEGER NOT NULL DEFAULT 0;
  UPDATE tasks SET
    journal_bytes = coalesce((SELECT sum(octet_length(data)) FROM journal WHERE task_id = tasks.id), 0),
    journal_entries = (SELECT count(*) FROM journal WHERE task_id = tasks.id);
  `,
  // 12: a change counter per task, so a process's change feed finds every task changed since its last tick in one
  // indexed query (ADR 0028). Writes are serialized, so the counter grows in commit order; a trigger's own update
  // sets change_seq only and fires no trigger.
  `
  ALTER TABLE tasks ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX tasks_by_change ON tasks (change_seq);
  CREATE TRIGGER tasks_change_on_insert AFTER INSERT ON tasks
    BEGIN UPDATE tasks SET change_seq = (SELECT max(change_seq) FROM tasks) + 1 WHERE id = NEW.id; END;
  CREATE TRIGGER tasks_change_on_update AFTER UPDATE OF status, pause_reason, updated_at, journal_entries ON tasks
    BEGIN UPDATE tasks SET change_seq = (SELECT max(change_seq) FROM tasks) + 1 WHERE id = NEW.id; END;
  `,
  // 13: a counter of status changes alone (status, pause reason, update time; not journal appends), the cursor of
  // GET /task-events (ADR 0028): a client resuming after it gets each task whose status changed since, once, at
  // its latest. Existing tasks are numbered once in change order; a trigger's own update fires no trigger.
  `
  ALTER TABLE tasks ADD COLUMN status_seq INTEGER NOT NULL DEFAULT 0;
  UPDATE tasks SET status_seq = r.n
    FROM (SELECT id, row_number() OVER (ORDER BY change_seq, id) AS n FROM tasks) AS r WHERE r.id = tasks.id;
  CREATE INDEX tasks_by_status_change ON tasks (status_seq);
  CREATE INDEX tasks_by_tenant_status_change ON tasks (tenant, status_seq);
  CREATE TRIGGER tasks_status_on_insert AFTER INSERT ON tasks
    BEGIN UPDATE tasks SET status_seq = (SELECT max(status_seq) FROM tasks) + 1 WHERE id = NEW.id; END;
  CREATE TRIGGER tasks_status_on_update AFTER UPDATE OF status, pause_reason, updated_at ON tasks
    BEGIN UPDATE tasks SET status_seq = (SELECT max(status_seq) FROM tasks) + 1 WHERE id = NEW.id; END;
  `,
  // 14: a summary of each task's journal, folded with each append (ADR 0035), so a view reads it and not the
  // journal. Empty here: a task journaled before has none until a reader folds its journal once (lazily, in pages)
  // and keeps it, so a big database opens at once.
  `
  CREATE TABLE journal_summaries (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    checksum TEXT NOT NULL,
    summary TEXT NOT NULL
  ) STRICT;
  `,
  // 15: a list's form of a big input beside it (listed_input), and the input moved to the row's last column
  // (ADR 0036): SQLite reaches a column by walking the overflow pages of the ones before it, so a list that skips
  // the input then never reads a program. Tasks written before keep listed_input null (a list reads their input).
  `
  ALTER TABLE tasks ADD COLUMN listed_input TEXT;
  ALTER TABLE tasks ADD COLUMN input_last TEXT NOT NULL DEFAULT '';
  UPDATE tasks SET input_last = input;
  ALTER TABLE tasks DROP COLUMN input;
  ALTER TABLE tasks RENAME COLUMN input_last TO input;
  `,
  // 16: which tasks revise which (ADR 0034), written with the revision, so a task's view names its revisions
  // (`revised_by`) in one indexed read. A table beside tasks, not a column: `input` stays the row's last column
  // (ADR 0036). Tasks written before are found once here by their input's `revisionOf` (a garbled input is skipped).
  `
  CREATE TABLE task_revisions (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    revision_of TEXT NOT NULL,
    tenant TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX task_revisions_by_source ON task_revisions (revision_of, tenant, created_at, task_id);
  INSERT INTO task_revisions (task_id, revision_of, tenant, created_at)
    SELECT id, revision_of, tenant, created_at FROM (
      SELECT id, tenant, created_at,
        CASE WHEN json_valid(input) THEN json_extract(input, '$.revisionOf') END AS revision_of
      FROM tasks WHERE instr(input, '"revisionOf"') > 0
    ) WHERE typeof(revision_of) = 'text'
    ORDER BY created_at, id;
  `,
  // 17: the journal and artifacts as rowid tables, their big column last. In a WITHOUT ROWID table a row is a key
  // of the primary key's b-tree: a lookup that compares against a row whose payload overflows reads all of it, and
  // interior pages hold whole rows as dividers, so one 1 MiB entry slowed every lookup near it, any task's. A rowid
  // table's interior pages hold integers, its key index holds (task_id, seq), and columns before `data` are read
  // without walking its overflow pages.
  `
  CREATE TABLE journal_rows (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL CHECK (seq > 0),
    type TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) STRICT;
  INSERT INTO journal_rows (task_id, seq, type, checksum, created_at, data)
    SELECT task_id, seq, type, checksum, created_at, data FROM journal ORDER BY task_id, seq;
  DROP TABLE journal;
  ALTER TABLE journal_rows RENAME TO journal;
  CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
  CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
  CREATE TABLE artifact_files (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (task_id, name)
  ) STRICT;
  INSERT INTO artifact_files (task_id, name, size, sha256, created_at, data)
    SELECT task_id, name, size, sha256, created_at, data FROM artifacts ORDER BY task_id, name;
  DROP TABLE artifacts;
  ALTER TABLE artifact_files RENAME TO artifacts;
  `,
  // 18: API key rows carry a MAC with the audit key (ADR 0030 update); the first keyed open keys the rows there and
  // signs a marker (keys_sig), after which a key row without a valid MAC authenticates no one.
  `
  ALTER TABLE api_keys ADD COLUMN mac TEXT;
  ALTER TABLE audit_key ADD COLUMN keys_sig TEXT;
  `,
  // 19: large response bodies out of line, in chunked rows (ADR 0046).
  SQLITE_BODIES_STEP,
  // 20: per-tenant rate limits and quotas on tool calls (ADR 0045): each tenant's token bucket of a tool, and its
  // count of calls of the tool in the current quota period.
  `
  CREATE TABLE tool_rate_buckets (
    tenant TEXT NOT NULL,
    tool TEXT NOT NULL,
    tokens REAL NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, tool)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE tool_quota_counts (
    tenant TEXT NOT NULL,
    tool TEXT NOT NULL,
    period_start INTEGER NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (tenant, tool)
  ) STRICT, WITHOUT ROWID;
  `,
  // 21: the operator's view (ADR 0054) reads the tasks that ended in a window, newest first. Partial: only ended
  // rows carry these, each once, when it ends. Without them the only bounded walk was by status change, which a
  // burst of new tasks fills before any end.
  SQLITE_ENDED_STEP,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema up to SCHEMA_VERSION in one transaction; returns the number of steps applied. */
export function migrate(db: Database.Database, migrations: readonly string[] = MIGRATIONS): number {
  const apply = db.transaction((): number => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT');
    const row = db.prepare('SELECT max(version) AS version FROM schema_version').get() as
      { version: number | null } | undefined;
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new CodecallError(
        'STORE_ERROR',
        `Database schema version ${current} is newer than this codecall supports (${migrations.length}); upgrade codecall`,
        { details: { schemaVersion: current, supportedVersion: migrations.length } },
      );
    }
    for (let version = current + 1; version <= migrations.length; version++) {
      db.exec(migrations[version - 1] ?? '');
    }
    if (current < migrations.length) {
      db.prepare('DELETE FROM schema_version').run();
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(migrations.length);
    }
    return migrations.length - current;
  });
  // IMMEDIATE: two processes opening a fresh file at once must not both run the steps.
  return apply.immediate();
}
