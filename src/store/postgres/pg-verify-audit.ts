import { CodecallError } from '../../errors/index.ts';
import type { Head } from '../audit-macs.ts';
import { checkKeying } from '../keyed-audit-check.ts';
import type { KeyedAuditReport, KeyRow } from '../keyed-audit-check.ts';
import { checkTask } from '../keyed-audit-task.ts';
import type { ArtifactFacts, AuditRow, AuditTally, JournalRow } from '../keyed-audit-task.ts';
import { toPgStoreError } from './pg-errors.ts';
import { createPool } from './pg-pool.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// The keyed verification of ADR 0030 on PostgreSQL: the rows are read here, judged by the same functions as on
// SQLite (../keyed-audit-check.ts), so both name the same findings in the same order. Text is ordered bytewise
// (COLLATE "C"), as SQLite orders it: the order of findings and the artifacts digest must not depend on the
// server's collation.

const PAGE = 100;

/**
 * Checks every task's audit log against the key, inside the caller's transaction (REPEATABLE READ, so that counts,
 * heads and rows are one snapshot). Read-only.
 */
export async function verifyKeyedPostgres(sql: Sql, key: Buffer): Promise<KeyedAuditReport> {
  const known = await one<{ fingerprint: string; tasks: number; tasks_sig: string; keys_sig: string | null }>(
    sql,
    'SELECT fingerprint, tasks, tasks_sig, keys_sig FROM audit_key WHERE id = 1',
  );
  const tasks = (await one<{ n: number }>(sql, 'SELECT count(*) AS n FROM tasks'))?.n ?? 0;
  const keyRows = await all<KeyRow>(sql, 'SELECT * FROM api_keys ORDER BY created_at, id COLLATE "C"');
  const keying = checkKeying(key, {
    known,
    tasks,
    keys: () => ({ sig: known?.keys_sig ?? null, count: keyRows.length }),
    keyRows: () => keyRows,
  });
  if (!keying.keyed) return { keyed: false, legacyRows: 0, keyedRows: 0, findings: keying.findings };
  const tally: AuditTally = { findings: keying.findings, legacyRows: 0, keyedRows: 0 };
  // One sort of every task, read a page at a time (a cursor lives in the transaction).
  await sql.query('DECLARE audit_tasks NO SCROLL CURSOR FOR SELECT * FROM tasks ORDER BY id COLLATE "C"');
  for (;;) {
    const page = await all<Record<string, unknown>>(sql, `FETCH ${PAGE} FROM audit_tasks`);
    if (page.length === 0) break;
    const ids = page.map((t) => String(t.id));
    const heads = byTask(await all<Head>(sql, 'SELECT * FROM audit_heads WHERE task_id = ANY($1)', [ids]));
    const rows = byTask(
      await all<AuditRow>(sql, 'SELECT * FROM audit_log WHERE task_id = ANY($1) ORDER BY task_id, seq', [
        ids,
      ]),
    );
    const artifacts = byTask(
      await all<ArtifactFacts & { task_id: string }>(
        sql,
        `SELECT task_id, name, size, sha256, length(data) AS "dataSize", encode(sha256(data), 'hex') AS "dataSha256"
           FROM artifacts WHERE task_id = ANY($1) ORDER BY task_id, name COLLATE "C"`,
        [ids],
      ),
    );
    for (const task of page) {
      const id = String(task.id);
      // A journal may be long: read per task, and only when the check gets that far.
      const journal =
        heads.get(id) === undefined
          ? []
          : await all<JournalRow>(
              sql,
              'SELECT seq, checksum, created_at FROM journal WHERE task_id = $1 ORDER BY seq',
              [id],
            );
      checkTask(
        key,
        {
          task,
          head: heads.get(id)?.[0],
          rows: () => rows.get(id) ?? [],
          journal: () => journal,
          artifacts: () => artifacts.get(id) ?? [],
        },
        tally,
      );
    }
  }
  await sql.query('CLOSE audit_tasks');
  return { keyed: true, legacyRows: tally.legacyRows, keyedRows: tally.keyedRows, findings: tally.findings };
}

function byTask<R extends { task_id: string }>(rows: readonly R[]): Map<string, R[]> {
  const map = new Map<string, R[]>();
  for (const r of rows) {
    const list = map.get(r.task_id);
    if (list === undefined) map.set(r.task_id, [r]);
    else list.push(r);
  }
  return map;
}

/**
 * `verifyKeyedPostgres` over the codecall schema `schema` (default `codecall`) of the server at `url`, in one
 * read-only snapshot. A schema without codecall's tables is NOT_FOUND (nothing is created).
 */
export async function verifyPostgresAudit(options: {
  url: string;
  schema?: string;
  key: Buffer;
}): Promise<KeyedAuditReport> {
  const schema = options.schema ?? 'codecall';
  const pool = createPool({ url: options.url, schema, poolSize: 1, statementTimeoutMs: 0 });
  try {
    const client = await pool.connect();
    try {
      await assertCodecallSchema(client, schema);
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      try {
        return await verifyKeyedPostgres(client, options.key);
      } finally {
        await client.query('ROLLBACK');
      }
    } finally {
      client.release();
    }
  } catch (error) {
    throw toPgStoreError(error);
  } finally {
    await pool.end();
  }
}

/** Refuses a schema codecall never created (a mistyped --schema) before a store, which would create it, opens. */
export async function assertPostgresSchema(options: { url: string; schema: string }): Promise<void> {
  const pool = createPool({ url: options.url, schema: options.schema, poolSize: 1 });
  try {
    await assertCodecallSchema(pool, options.schema);
  } catch (error) {
    throw toPgStoreError(error);
  } finally {
    await pool.end();
  }
}

async function assertCodecallSchema(sql: Sql, schema: string): Promise<void> {
  const found = await one<{ t: string | null }>(sql, 'SELECT to_regclass($1) AS t', [
    `"${schema}".audit_log`,
  ]);
  if (found?.t == null)
    throw new CodecallError('NOT_FOUND', `no codecall schema "${schema}" in this database`, {
      details: { schema },
    });
}
