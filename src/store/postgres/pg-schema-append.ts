// Version 4 of the PostgreSQL schema: the journal's chain check made cheaper, with the same promises (ADR 0050).
// chain_checksum becomes inlinable: convert_to is STABLE and `integer || text` casts through a STABLE operator, so
// the IMMUTABLE SQL function could not be inlined and ran as a function call per entry (a few us each, most of
// the chain check's time). Declared STABLE with an explicit cast, the planner inlines it into the check's query;
// its value is the same (it is computed in the trigger, never stored in an index or a constraint). The checks then
// look for a bad entry without sorting, and sort only to name the first one in the error.

export const SCHEMA_APPEND = `
CREATE OR REPLACE FUNCTION chain_checksum(prev text, seq integer, type text, data text) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN encode(sha256(convert_to(prev || E'\\n' || seq::text || E'\\n' || type || E'\\n' || data, 'UTF8')), 'hex');
CREATE OR REPLACE FUNCTION check_journal_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  PERFORM FROM added AS n
    LEFT JOIN tasks AS t ON t.id = n.task_id
    LEFT JOIN journal AS p ON p.task_id = n.task_id AND p.seq = n.seq - 1
    WHERE t.fencing_token IS DISTINCT FROM n.fencing_token
      OR (n.seq > 1 AND p.checksum IS NULL)
      OR n.checksum <> chain_checksum(coalesce(p.checksum, ''), n.seq, n.type, n.data)
    LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
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
  -- A statement sees the entries committed since the first (READ COMMITTED): a bad entry is still refused.
  IF NOT FOUND THEN
    RAISE EXCEPTION 'a journal entry does not chain to the entry before it' USING ERRCODE = 'CC422';
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
`;
