import { CodecallError } from '../../errors/index.ts';
import type {
  ApiKeyRecord,
  KeyRole,
  WebhookAttempt,
  WebhookCounts,
  WebhookMessage,
} from '../../spec/index.ts';
import { keyRowMac } from '../audit-macs.ts';
import type { KeyRowFields } from '../audit-macs.ts';
import { KEYS_SIG_COLUMN } from './pg-api-key-macs.ts';
import type { KeyRowCheck } from './pg-api-key-macs.ts';
import { apiKeyRecordOf, OUTBOX_COLUMNS, webhookMessageOf } from '../service-rows.ts';
import type { KeyRow, OutboxRow } from '../service-rows.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// ServiceStore on PostgreSQL: API keys and the webhook outbox (the triggers of pg-schema.ts fill it in the
// transaction of each status change), as sqlite-service.ts does on SQLite.

const KEY_COLUMNS = 'id, tenant, role, name, created_at, revoked_at';

/**
 * With the audit key a row carries its MAC from the insert (ADR 0030 update); without, mac is NULL (a keyed store
 * refuses the row). A second key with the same hash breaks the UNIQUE constraint.
 */
export async function insertApiKey(
  sql: Sql,
  auditKey: Buffer | undefined,
  key: { id: string; keyHash: string; tenant: string; role: KeyRole; name?: string | null },
  now: number,
): Promise<ApiKeyRecord> {
  const fields: KeyRowFields = {
    id: key.id,
    key_hash: key.keyHash,
    tenant: key.tenant,
    role: key.role,
    name: key.name ?? null,
    created_at: now,
    revoked_at: null,
  };
  const mac = auditKey === undefined ? null : keyRowMac(auditKey, fields);
  const row = await one<KeyRow>(
    sql,
    `INSERT INTO api_keys (id, key_hash, tenant, role, name, created_at, mac) VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING ${KEY_COLUMNS}`,
    [fields.id, fields.key_hash, fields.tenant, fields.role, fields.name, now, mac],
  );
  if (row === undefined) throw new Error(`API key ${key.id} was not written`);
  return apiKeyRecordOf(row);
}

/** The live key with this hash; `check` refuses a row the audit key does not vouch for. */
export async function findApiKey(
  sql: Sql,
  keyHash: string,
  check: KeyRowCheck,
): Promise<ApiKeyRecord | null> {
  const row = await one<KeyRow & KeyRowFields & { mac: string | null; keys_sig: string | null }>(
    sql,
    `SELECT ${KEY_COLUMNS}, key_hash, mac, ${KEYS_SIG_COLUMN} FROM api_keys
       WHERE key_hash = $1 AND revoked_at IS NULL`,
    [keyHash],
  );
  if (row === undefined) return null;
  check.assert(row);
  return apiKeyRecordOf(row);
}

export async function listApiKeys(sql: Sql): Promise<ApiKeyRecord[]> {
  return (await all<KeyRow>(sql, `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`)).map(
    apiKeyRecordOf,
  );
}

export async function revokedApiKeys(sql: Sql, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await all<{ id: string }>(
    sql,
    'SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND id = ANY($1::text[])',
    [ids],
  );
  return rows.map((r) => r.id);
}

/** In a transaction: the revocation and, with the audit key, the row's new MAC commit together. */
export async function revokeApiKey(
  sql: Sql,
  auditKey: Buffer | undefined,
  id: string,
  now: number,
): Promise<ApiKeyRecord> {
  const row = await one<KeyRow & KeyRowFields>(
    sql,
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 RETURNING ${KEY_COLUMNS}, key_hash`,
    [now, id],
  );
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No API key ${id}`, { details: { keyId: id } });
  if (auditKey !== undefined)
    await sql.query('UPDATE api_keys SET mac = $1 WHERE id = $2', [keyRowMac(auditKey, row), id]);
  return apiKeyRecordOf(row);
}

// Ties in insertion order, except that a batch's completion follows the event of its last task written in the
// same change (the order SQLite gives them).
const DUE = `SELECT ${OUTBOX_COLUMNS} FROM webhook_outbox
  WHERE state = 'pending' AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
  ORDER BY next_attempt_at, created_at, event = 'batch.completed', seq LIMIT $2`;

/** Due messages no dispatcher holds a live claim on; with `claim`, run in a transaction that claims them. */
export async function dueWebhooks(
  sql: Sql,
  now: number,
  limit: number,
  claim?: { owner: string; leaseMs: number },
): Promise<WebhookMessage[]> {
  if (claim === undefined) return (await all<OutboxRow>(sql, DUE, [now, limit])).map(webhookMessageOf);
  // SKIP LOCKED passes over rows another dispatcher is claiming right now; once it commits, the recheck of the
  // WHERE on the row's new version (READ COMMITTED) sees the live claim. So no message goes to two at once.
  const rows = await all<OutboxRow>(sql, `${DUE} FOR UPDATE SKIP LOCKED`, [now, limit]);
  if (rows.length > 0) {
    await sql.query(
      'UPDATE webhook_outbox SET claimed_by = $1, claimed_until = $2 WHERE id = ANY($3::text[])',
      [claim.owner, now + claim.leaseMs, rows.map((r) => r.id)],
    );
  }
  return rows.map(webhookMessageOf);
}

export async function releaseWebhook(sql: Sql, id: string, owner: string): Promise<void> {
  await sql.query(
    `UPDATE webhook_outbox SET claimed_by = NULL, claimed_until = NULL
       WHERE id = $1 AND claimed_by = $2 AND state = 'pending'`,
    [id, owner],
  );
}

export async function recordWebhookAttempt(
  sql: Sql,
  id: string,
  attempt: WebhookAttempt & { readonly body: string },
  now: number,
): Promise<void> {
  const state = attempt.outcome === 'retry' ? 'pending' : attempt.outcome;
  const next = attempt.outcome === 'retry' ? attempt.nextAttemptAt : now;
  const error = attempt.outcome === 'delivered' ? null : attempt.error;
  const result = await sql.query(
    `UPDATE webhook_outbox SET body = coalesce(body, $1), attempts = attempts + 1, state = $2,
       next_attempt_at = $3, last_error = $4, finished_at = $5, claimed_by = NULL, claimed_until = NULL
     WHERE id = $6 AND state = 'pending'`,
    [attempt.body, state, next, error, state === 'pending' ? null : now, id],
  );
  if (result.rowCount === 0) {
    throw new CodecallError('NOT_FOUND', `No pending webhook ${id}`, { details: { webhookId: id } });
  }
}

export async function webhookCounts(sql: Sql): Promise<WebhookCounts> {
  const counts = { pending: 0, delivered: 0, failed: 0 };
  const rows = await all<{ state: keyof WebhookCounts; n: number }>(
    sql,
    'SELECT state, count(*) AS n FROM webhook_outbox GROUP BY state',
  );
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}

export async function nextWebhookAt(sql: Sql): Promise<number | null> {
  const row = await one<{ at: number | null }>(
    sql,
    "SELECT min(next_attempt_at) AS at FROM webhook_outbox WHERE state = 'pending'",
  );
  return row?.at ?? null;
}
