// What `codecall migrate` copies from a SQLite database into PostgreSQL, table by table, in an order that satisfies
// the foreign keys. Columns are named as in both schemas; PostgreSQL's own columns (change stamps, status numbers,
// journal fencing tokens) are filled by its triggers or given below.

export interface CopiedTable {
  readonly name: string;
  /** The columns copied and compared (both schemas have them). */
  readonly columns: readonly string[];
  /** A total order, the same in both databases (text compared bytewise: COLLATE "C" on PostgreSQL). */
  readonly orderBy: readonly string[];
  /** PostgreSQL's own order of the same rows when it differs (a column SQLite does not have). */
  readonly pgOrderBy?: readonly string[];
  /** Columns of PostgreSQL's own to give on insert: name -> SQL expression over the inserted row's columns. */
  readonly extra?: Readonly<Record<string, string>>;
  /** SQLite keeps these columns in another table: its name, and the column each one is read from there. */
  readonly from?: { readonly table: string; readonly columns: Readonly<Record<string, string>> };
  /** The rows exist already (a trigger made them): each is updated where this column matches, not inserted. */
  readonly updateKey?: string;
}

export const COPIED_TABLES: readonly CopiedTable[] = [
  {
    name: 'tasks',
    columns: [
      'id',
      'status',
      'pause_reason',
      'result',
      'error',
      'attempts',
      'version',
      'lease_owner',
      'lease_expires_at',
      'fencing_token',
      'created_at',
      'updated_at',
      'execution_log',
      'resources',
      'requested_action',
      'wake_at',
      'tenant',
      'session_id',
      'batch_id',
      'priority',
      'callback_url',
      'max_retries',
      'retries',
      'run_after',
      'deadline_at',
      'listed_input',
      'input',
    ],
    orderBy: ['created_at', 'id'],
  },
  {
    // PostgreSQL keeps the journal's totals beside the task's change stamp (schema step 5), in a row the task's
    // insert made.
    name: 'task_changes',
    columns: ['task_id', 'journal_bytes', 'journal_entries'],
    orderBy: ['task_id'],
    from: {
      table: 'tasks',
      columns: { task_id: 'id', journal_bytes: 'journal_bytes', journal_entries: 'journal_entries' },
    },
    updateKey: 'task_id',
  },
  {
    name: 'journal',
    columns: ['task_id', 'seq', 'type', 'checksum', 'created_at', 'data'],
    orderBy: ['task_id', 'seq'],
    // Entries written before PostgreSQL carried no token: they are given the task's current one (the check's own).
    extra: { fencing_token: '(SELECT t.fencing_token FROM tasks t WHERE t.id = v.task_id)' },
  },
  {
    name: 'audit_log',
    columns: ['task_id', 'seq', 'type', 'data', 'checksum', 'created_at', 'covers', 'data_mac', 'mac'],
    orderBy: ['task_id', 'seq'],
  },
  { name: 'idempotency_keys', columns: ['key', 'request_hash', 'task_id', 'created_at'], orderBy: ['key'] },
  {
    name: 'batches',
    columns: ['id', 'tenant', 'callback_url', 'size', 'created_at', 'completed_at'],
    orderBy: ['id'],
  },
  {
    name: 'api_keys',
    columns: ['id', 'key_hash', 'tenant', 'role', 'name', 'created_at', 'revoked_at', 'mac'],
    orderBy: ['id'],
  },
  {
    name: 'webhook_outbox',
    columns: [
      'id',
      'event',
      'task_id',
      'batch_id',
      'url',
      'snapshot',
      'body',
      'state',
      'attempts',
      'next_attempt_at',
      'claimed_by',
      'claimed_until',
      'last_error',
      'created_at',
      'finished_at',
    ],
    // Insertion order (SQLite's rowid), which PostgreSQL numbers anew in `seq` as they go in.
    orderBy: ['rowid'],
    pgOrderBy: ['seq'],
  },
  {
    name: 'artifacts',
    columns: ['task_id', 'name', 'size', 'sha256', 'created_at', 'data'],
    orderBy: ['task_id', 'name'],
  },
  { name: 'tenant_turns', columns: ['tenant', 'served'], orderBy: ['tenant'] },
  {
    name: 'audit_key',
    columns: ['id', 'fingerprint', 'keyed_at', 'tasks', 'tasks_sig', 'keys_sig'],
    orderBy: ['id'],
  },
  {
    name: 'audit_heads',
    columns: ['task_id', 'legacy_seq', 'seq', 'mac', 'covers', 'sig'],
    orderBy: ['task_id'],
  },
  { name: 'journal_summaries', columns: ['task_id', 'seq', 'checksum', 'summary'], orderBy: ['task_id'] },
  {
    name: 'task_revisions',
    columns: ['task_id', 'revision_of', 'tenant', 'created_at'],
    orderBy: ['task_id'],
  },
  // Tenants' rate limits and quotas (ADR 0045): a month's count survives the move.
  {
    name: 'tool_rate_buckets',
    columns: ['tenant', 'tool', 'tokens', 'updated_at'],
    orderBy: ['tenant', 'tool'],
  },
  {
    name: 'tool_quota_counts',
    columns: ['tenant', 'tool', 'period_start', 'used'],
    orderBy: ['tenant', 'tool'],
  },
];
