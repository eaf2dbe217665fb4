// Version 1 of the PostgreSQL schema: the SQLite schema's final form (migrations 1-18) in one step, plus what
// only many nodes need (ADR 0042). JSON columns are text, not jsonb: the store keeps the exact bytes it was given
// (checksums and tests of garbled rows rely on it). Times are epoch ms in bigint, as in SQLite.

export const SCHEMA_V1 = `
CREATE TABLE tasks (
  id text PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled')),
  pause_reason text,
  result text,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  version integer NOT NULL DEFAULT 1,
  lease_owner text,
  lease_expires_at bigint,
  fencing_token bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  execution_log text,
  resources text,
  requested_action text CHECK (requested_action IN ('pause', 'cancel')),
  wake_at bigint,
  tenant text NOT NULL DEFAULT 'default',
  session_id text,
  batch_id text,
  priority integer NOT NULL DEFAULT 0,
  callback_url text,
  max_retries integer NOT NULL DEFAULT 0,
  retries integer NOT NULL DEFAULT 0,
  run_after bigint,
  deadline_at bigint,
  journal_bytes bigint NOT NULL DEFAULT 0,
  journal_entries integer NOT NULL DEFAULT 0,
  status_seq bigint NOT NULL DEFAULT 0,
  listed_input text,
  input text NOT NULL
);
CREATE INDEX tasks_by_created ON tasks (created_at, id);
CREATE INDEX tasks_by_status_created ON tasks (status, created_at, id);
CREATE INDEX tasks_claim ON tasks (status, priority DESC, created_at, id);
CREATE INDEX tasks_fair ON tasks (status, tenant, priority DESC, created_at, id);
CREATE INDEX tasks_by_tenant ON tasks (tenant, created_at, id);
CREATE INDEX tasks_by_tenant_status ON tasks (tenant, status);
CREATE INDEX tasks_by_session ON tasks (tenant, session_id, created_at, id) WHERE session_id IS NOT NULL;
CREATE INDEX tasks_by_batch ON tasks (batch_id, status) WHERE batch_id IS NOT NULL;
CREATE INDEX tasks_by_deadline ON tasks (deadline_at) WHERE deadline_at IS NOT NULL;
CREATE INDEX tasks_by_wake ON tasks (wake_at) WHERE wake_at IS NOT NULL;
CREATE INDEX tasks_by_requested ON tasks (lease_owner) WHERE requested_action IS NOT NULL;
CREATE INDEX tasks_by_pause_reason ON tasks (pause_reason, created_at, id) WHERE pause_reason IS NOT NULL;
CREATE INDEX tasks_by_status_change ON tasks (status_seq);
CREATE INDEX tasks_by_tenant_status_change ON tasks (tenant, status_seq);

-- The change feed (readChanges, ADR 0042): every change stamps the task's row in task_changes with its
-- transaction's id. A reader takes only rows of transactions older than every running one (its snapshot's xmin), so
-- no row can later appear behind its cursor; change_seq orders the rows of one transaction. A table of its own, not
-- columns of tasks: an indexed column changed by every journal append would make each append's update of the task
-- (its journal totals) rewrite every index of tasks instead of being a HOT update.
CREATE TABLE task_changes (
  task_id text PRIMARY KEY REFERENCES tasks (id),
  change_xid bigint NOT NULL,
  change_seq bigint NOT NULL
);
CREATE INDEX task_changes_by_change ON task_changes (change_xid, change_seq);
CREATE SEQUENCE change_seq_counter;
CREATE FUNCTION stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- An update first: the task's row exists after its first change, and ON CONFLICT would log a lock besides.
  UPDATE task_changes SET change_xid = pg_current_xact_id()::text::bigint, change_seq = nextval('change_seq_counter')
    WHERE task_id = NEW.id;
  IF NOT FOUND THEN
    INSERT INTO task_changes (task_id, change_xid, change_seq)
      VALUES (NEW.id, pg_current_xact_id()::text::bigint, nextval('change_seq_counter'));
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_change_on_insert AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION stamp_change();
CREATE TRIGGER tasks_change_on_update AFTER UPDATE OF status, pause_reason, updated_at, journal_entries ON tasks
  FOR EACH ROW EXECUTE FUNCTION stamp_change();

-- Status changes are numbered at commit (a deferred trigger) under a lock held until the commit ends, so their
-- numbers grow in commit order and GET /task-events can resume from any of them (ADR 0042).
CREATE SEQUENCE status_seq_counter;
CREATE FUNCTION number_status_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('codecall.status_seq.' || current_schema()));
  UPDATE tasks SET status_seq = nextval('status_seq_counter') WHERE id = NEW.id;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER tasks_status_seq AFTER INSERT OR UPDATE OF status, pause_reason, updated_at ON tasks
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION number_status_change();

-- Nodes hear of work, control requests and changes from the database (ADR 0042), not by polling: each
-- notification is a hint (one channel per schema); nodes still poll, rarely. Same payloads of one transaction are
-- folded into one by PostgreSQL. Status-changing commits already take turns (above), so notifying costs them little.
CREATE FUNCTION notify_task() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  channel text := 'codecall_' || current_schema();
BEGIN
  IF TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status OR NEW.pause_reason IS DISTINCT FROM OLD.pause_reason THEN
    PERFORM pg_notify(channel, '{"kind":"changed"}');
  END IF;
  IF (NEW.status = 'pending' AND (TG_OP = 'INSERT' OR OLD.status <> 'pending'))
     OR (TG_OP = 'UPDATE' AND NEW.status = 'running' AND NEW.lease_owner IS NULL AND OLD.lease_owner IS NOT NULL) THEN
    PERFORM pg_notify(channel, '{"kind":"work"}');
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.requested_action IS NOT NULL
     AND NEW.requested_action IS DISTINCT FROM OLD.requested_action THEN
    PERFORM pg_notify(channel, json_build_object('kind', 'control', 'taskId', NEW.id, 'owner', NEW.lease_owner,
      'action', NEW.requested_action)::text);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE OF status, pause_reason, lease_owner, requested_action ON tasks
  FOR EACH ROW EXECUTE FUNCTION notify_task();

-- No foreign key on task_id: the chain check below joins the task for its token anyway, and a key would cost a
-- row lock per entry; tasks_keep_journal refuses deleting a task that has one.
CREATE TABLE journal (
  task_id text NOT NULL,
  seq integer NOT NULL CHECK (seq > 0),
  type text NOT NULL,
  checksum text NOT NULL,
  created_at bigint NOT NULL,
  fencing_token bigint NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (task_id, seq)
);

-- The database holds the journal to its promises itself: entries follow each other, each checksum chains to the
-- one before, and an entry is written only under the task's current fencing token (the writer locked the row).
-- Checked once per statement over all its rows (a transition table), not row by row: a batch of appends costs one
-- set-based query. Static statements, planned once per connection.
-- The checksum an entry must carry: the one the client computes (journal-checksum.ts), over the same text.
CREATE FUNCTION chain_checksum(prev text, seq integer, type text, data text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN encode(sha256(convert_to(prev || E'\\n' || seq || E'\\n' || type || E'\\n' || data, 'UTF8')), 'hex');
CREATE FUNCTION check_journal_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.task_id, n.seq, n.fencing_token, t.fencing_token AS held, p.checksum AS prev
    INTO bad
    FROM added AS n
    LEFT JOIN tasks AS t ON t.id = n.task_id
    LEFT JOIN journal AS p ON p.task_id = n.task_id AND p.seq = n.seq - 1
    WHERE t.fencing_token IS DISTINCT FROM n.fencing_token
      OR (n.seq > 1 AND p.checksum IS NULL)
      OR n.checksum <> chain_checksum(coalesce(p.checksum, ''), n.seq, n.type, n.data)
    ORDER BY n.task_id, n.seq
    LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  ELSIF bad.held IS NULL THEN
    RAISE EXCEPTION 'journal entry % names task %, which does not exist', bad.seq, bad.task_id
      USING ERRCODE = 'foreign_key_violation';
  ELSIF bad.held IS DISTINCT FROM bad.fencing_token THEN
    RAISE EXCEPTION 'journal entry % of task % written under fencing token %, the task holds %',
      bad.seq, bad.task_id, bad.fencing_token, bad.held USING ERRCODE = 'CC409';
  ELSIF bad.seq > 1 AND bad.prev IS NULL THEN
    RAISE EXCEPTION 'journal entry % of task % does not follow an entry', bad.seq, bad.task_id USING ERRCODE = 'CC422';
  END IF;
  RAISE EXCEPTION 'journal entry % of task % does not chain to the entry before it', bad.seq, bad.task_id
    USING ERRCODE = 'CC422';
END $$;
CREATE FUNCTION check_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.task_id, n.seq, p.checksum AS prev
    INTO bad
    FROM added AS n
    LEFT JOIN audit_log AS p ON p.task_id = n.task_id AND p.seq = n.seq - 1
    WHERE (n.seq > 1 AND p.checksum IS NULL)
      OR n.checksum <> chain_checksum(coalesce(p.checksum, ''), n.seq, n.type, n.data)
    ORDER BY n.task_id, n.seq
    LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  ELSIF bad.seq > 1 AND bad.prev IS NULL THEN
    RAISE EXCEPTION 'audit_log entry % of task % does not follow an entry', bad.seq, bad.task_id USING ERRCODE = 'CC422';
  END IF;
  RAISE EXCEPTION 'audit_log entry % of task % does not chain to the entry before it', bad.seq, bad.task_id
    USING ERRCODE = 'CC422';
END $$;
CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the % is append-only', TG_TABLE_NAME USING ERRCODE = 'CC403';
END $$;
CREATE TRIGGER journal_chain AFTER INSERT ON journal REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION check_journal_chain();
CREATE TRIGGER journal_append_only BEFORE UPDATE OR DELETE ON journal FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER journal_no_truncate BEFORE TRUNCATE ON journal FOR EACH STATEMENT EXECUTE FUNCTION append_only();
CREATE FUNCTION keep_journal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM journal WHERE task_id = OLD.id) THEN
    RAISE EXCEPTION 'task % has a journal, which is append-only', OLD.id USING ERRCODE = 'CC403';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER tasks_keep_journal BEFORE DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION keep_journal();

CREATE TABLE audit_log (
  task_id text NOT NULL REFERENCES tasks (id),
  seq integer NOT NULL CHECK (seq > 0),
  type text NOT NULL,
  data text NOT NULL,
  checksum text NOT NULL,
  created_at bigint NOT NULL,
  covers text,
  data_mac text,
  mac text,
  PRIMARY KEY (task_id, seq)
);
CREATE TRIGGER audit_chain AFTER INSERT ON audit_log REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION check_audit_chain();
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION append_only();

CREATE TABLE idempotency_keys (
  key text PRIMARY KEY,
  request_hash text NOT NULL,
  task_id text NOT NULL REFERENCES tasks (id),
  created_at bigint NOT NULL
);

CREATE TABLE batches (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  callback_url text,
  size integer NOT NULL,
  created_at bigint NOT NULL,
  completed_at bigint
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  key_hash text NOT NULL UNIQUE,
  tenant text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'member', 'approver')),
  name text,
  created_at bigint NOT NULL,
  revoked_at bigint,
  mac text
);

CREATE TABLE webhook_outbox (
  id text PRIMARY KEY,
  event text NOT NULL,
  task_id text,
  batch_id text,
  url text NOT NULL,
  snapshot text NOT NULL,
  body text,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  claimed_by text,
  claimed_until bigint,
  last_error text,
  created_at bigint NOT NULL,
  finished_at bigint,
  -- Insertion order, the tie-break of messages of one instant (SQLite's rowid; the ids are random).
  seq bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE state = 'pending';

-- Webhooks are written in the transaction of the status change they report (the outbox), as in SQLite.
CREATE FUNCTION outbox_task_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.callback_url IS NOT NULL AND NEW.status <> OLD.status
     AND (NEW.status IN ('succeeded', 'failed', 'cancelled')
       OR (NEW.status = 'paused' AND coalesce(NEW.pause_reason, '') <> 'shutdown')) THEN
    INSERT INTO webhook_outbox (id, event, task_id, batch_id, url, snapshot, next_attempt_at, created_at)
    VALUES ('msg_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), 'task.' || NEW.status, NEW.id,
      NEW.batch_id, NEW.callback_url,
      json_build_object('status', NEW.status, 'pause_reason', NEW.pause_reason, 'error', NEW.error::json,
        'result', NEW.result, 'at', NEW.updated_at)::text,
      NEW.updated_at, NEW.updated_at);
  END IF;
  IF NEW.batch_id IS NOT NULL AND NEW.status <> OLD.status AND NEW.status IN ('succeeded', 'failed', 'cancelled') THEN
    -- The batch row is locked first, so two of its tasks ending at once see each other.
    PERFORM 1 FROM batches WHERE id = NEW.batch_id AND completed_at IS NULL FOR UPDATE;
    IF FOUND AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.batch_id = NEW.batch_id
        AND t.status NOT IN ('succeeded', 'failed', 'cancelled')) THEN
      UPDATE batches SET completed_at = NEW.updated_at WHERE id = NEW.batch_id;
      INSERT INTO webhook_outbox (id, event, batch_id, url, snapshot, next_attempt_at, created_at)
      SELECT 'msg_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), 'batch.completed', b.id,
        b.callback_url, json_build_object('at', NEW.updated_at)::text, NEW.updated_at, NEW.updated_at
      FROM batches b WHERE b.id = NEW.batch_id AND b.callback_url IS NOT NULL;
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_outbox AFTER UPDATE OF status ON tasks FOR EACH ROW EXECUTE FUNCTION outbox_task_event();

CREATE TABLE artifacts (
  task_id text NOT NULL REFERENCES tasks (id),
  name text NOT NULL,
  size integer NOT NULL,
  sha256 text NOT NULL,
  created_at bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (task_id, name)
);

CREATE TABLE store_probe (id integer PRIMARY KEY CHECK (id = 1), probed_at bigint NOT NULL);
INSERT INTO store_probe (id, probed_at) VALUES (1, 0);

CREATE TABLE tenant_turns (tenant text PRIMARY KEY, served bigint NOT NULL);

CREATE TABLE audit_key (
  id integer PRIMARY KEY CHECK (id = 1),
  fingerprint text NOT NULL,
  keyed_at bigint NOT NULL,
  tasks bigint NOT NULL,
  tasks_sig text NOT NULL,
  keys_sig text
);
CREATE TABLE audit_heads (
  task_id text PRIMARY KEY REFERENCES tasks (id),
  legacy_seq integer NOT NULL,
  seq integer NOT NULL,
  mac text NOT NULL,
  covers text NOT NULL,
  sig text NOT NULL
);

CREATE TABLE journal_summaries (
  task_id text PRIMARY KEY REFERENCES tasks (id),
  seq integer NOT NULL,
  checksum text NOT NULL,
  summary text NOT NULL
);

CREATE TABLE task_revisions (
  task_id text PRIMARY KEY REFERENCES tasks (id),
  revision_of text NOT NULL,
  tenant text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX task_revisions_by_source ON task_revisions (revision_of, tenant, created_at, task_id);
`;
