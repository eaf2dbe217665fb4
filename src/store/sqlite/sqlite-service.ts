import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type {
  ApiKeyRecord,
  KeyRole,
  WebhookAttempt,
  WebhookCounts,
  WebhookMessage,
} from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';
import { apiKeyRecordOf, OUTBOX_COLUMNS, webhookMessageOf } from '../service-rows.ts';
import type { KeyRow, OutboxRow } from '../service-rows.ts';
import { assertKeyRow, macKeyRow } from './api-key-macs.ts';
import type { KeyRowFields } from './api-key-macs.ts';

export function insertApiKey(
  db: Database.Database,
  key: { id: string; keyHash: string; tenant: string; role: KeyRole; name?: string | null },
  now: number,
): ApiKeyRecord {
  db.transaction(() => {
    prepared(
      db,
      'INSERT INTO api_keys (id, key_hash, tenant, role, name, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(key.id, key.keyHash, key.tenant, key.role, key.name ?? null, now);
    macKeyRow(db, key.id);
  })();
  return apiKeyRecordOf(prepared(db, 'SELECT * FROM api_keys WHERE id = ?').get(key.id) as KeyRow);
}

export function findApiKey(db: Database.Database, keyHash: string): ApiKeyRecord | null {
  const row = prepared(db, 'SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL').get(
    keyHash,
  ) as (KeyRow & KeyRowFields & { mac: string | null }) | undefined;
  if (row === undefined) return null;
  assertKeyRow(db, row);
  return apiKeyRecordOf(row);
}

export function listApiKeys(db: Database.Database): ApiKeyRecord[] {
  return (prepared(db, 'SELECT * FROM api_keys ORDER BY created_at, id').all() as KeyRow[]).map(
    apiKeyRecordOf,
  );
}

export function revokedApiKeys(db: Database.Database, ids: readonly string[]): string[] {
  if (ids.length === 0) return [];
  const rows = prepared(
    db,
    'SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND id IN (SELECT value FROM json_each(?))',
  ).all(JSON.stringify(ids)) as { id: string }[];
  return rows.map((r) => r.id);
}

export function revokeApiKey(db: Database.Database, id: string, now: number): ApiKeyRecord {
  db.transaction(() => {
    prepared(db, 'UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?').run(now, id);
    macKeyRow(db, id);
  })();
  const row = prepared(db, 'SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow | undefined;
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No API key ${id}`, { details: { keyId: id } });
  return apiKeyRecordOf(row);
}

export function dueWebhooks(
  db: Database.Database,
  now: number,
  limit: number,
  claim?: { owner: string; leaseMs: number },
): WebhookMessage[] {
  if (claim === undefined) return selectDue(db, now, limit);
  return db
    .transaction((): WebhookMessage[] => {
      const due = selectDue(db, now, limit);
      const mark = prepared(db, 'UPDATE webhook_outbox SET claimed_by = ?, claimed_until = ? WHERE id = ?');
      for (const m of due) mark.run(claim.owner, now + claim.leaseMs, m.id);
      return due;
    })
    .immediate();
}

export function releaseWebhook(db: Database.Database, id: string, owner: string): void {
  prepared(
    db,
    `UPDATE webhook_outbox SET claimed_by = NULL, claimed_until = NULL
       WHERE id = ? AND claimed_by = ? AND state = 'pending'`,
  ).run(id, owner);
}

/** Due messages no dispatcher holds a live claim on. */
function selectDue(db: Database.Database, now: number, limit: number): WebhookMessage[] {
  // Ties in insertion order (ids are random), except that a batch's completion follows the event of its last
  // task, written in the same change (SQLite fires the newer trigger first).
  const rows = prepared(
    db,
    `SELECT ${OUTBOX_COLUMNS}
       FROM webhook_outbox WHERE state = 'pending' AND next_attempt_at <= ?
         AND (claimed_until IS NULL OR claimed_until <= ?)
       ORDER BY next_attempt_at, created_at, event = 'batch.completed', rowid LIMIT ?`,
  ).all(now, now, limit) as OutboxRow[];
  return rows.map(webhookMessageOf);
}

export function recordWebhookAttempt(
  db: Database.Database,
  id: string,
  attempt: WebhookAttempt & { readonly body: string },
  now: number,
): void {
  const state = attempt.outcome === 'retry' ? 'pending' : attempt.outcome;
  const next = attempt.outcome === 'retry' ? attempt.nextAttemptAt : now;
  const error = attempt.outcome === 'delivered' ? null : attempt.error;
  const result = prepared(
    db,
    `UPDATE webhook_outbox SET body = coalesce(body, ?), attempts = attempts + 1, state = ?, next_attempt_at = ?,
       last_error = ?, finished_at = ?, claimed_by = NULL, claimed_until = NULL WHERE id = ? AND state = 'pending'`,
  ).run(attempt.body, state, next, error, state === 'pending' ? null : now, id);
  if (result.changes === 0) {
    throw new CodecallError('NOT_FOUND', `No pending webhook ${id}`, { details: { webhookId: id } });
  }
}

export function webhookCounts(db: Database.Database): WebhookCounts {
  const counts = { pending: 0, delivered: 0, failed: 0 };
  const rows = prepared(db, 'SELECT state, count(*) AS n FROM webhook_outbox GROUP BY state').all() as {
    state: keyof WebhookCounts;
    n: number;
  }[];
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}

export function nextWebhookAt(db: Database.Database): number | null {
  const row = prepared(
    db,
    "SELECT min(next_attempt_at) AS at FROM webhook_outbox WHERE state = 'pending'",
  ).get() as { at: number | null };
  return row.at;
}
