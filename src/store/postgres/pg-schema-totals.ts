// Version 5 of the PostgreSQL schema: the journal's totals move from `tasks` to the task's row in `task_changes`
// (ADR 0050, docs/scaling.md step 5). An append updated the task's row for its totals, and PostgreSQL opens every
// index of a table it updates, HOT or not (fifteen for `tasks`); then the change-stamp trigger updated
// `task_changes` as well. Now an append updates one narrow row, totals and change stamp together, and only takes
// a share lock on the task's row, which orders it against a claim's new fencing token as the update did.

export const SCHEMA_TOTALS = `
ALTER TABLE task_changes
  ADD COLUMN journal_bytes bigint NOT NULL DEFAULT 0,
  ADD COLUMN journal_entries integer NOT NULL DEFAULT 0;
UPDATE task_changes AS c SET journal_bytes = t.journal_bytes, journal_entries = t.journal_entries
  FROM tasks AS t WHERE t.id = c.task_id;
DROP TRIGGER tasks_change_on_update ON tasks;
CREATE TRIGGER tasks_change_on_update AFTER UPDATE OF status, pause_reason, updated_at ON tasks
  FOR EACH ROW EXECUTE FUNCTION stamp_change();
ALTER TABLE tasks DROP COLUMN journal_bytes, DROP COLUMN journal_entries;
`;
