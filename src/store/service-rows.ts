import type { ApiKeyRecord, KeyRole, WebhookEvent, WebhookMessage } from '../spec/index.ts';

// The rows of the service's tables (API keys, the webhook outbox) as both stores read them, and their records.

export interface KeyRow {
  id: string;
  tenant: string;
  role: KeyRole;
  name: string | null;
  created_at: number;
  revoked_at: number | null;
}

export interface OutboxRow {
  id: string;
  event: WebhookEvent;
  task_id: string | null;
  batch_id: string | null;
  url: string;
  snapshot: string;
  body: string | null;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
}

/** The outbox columns a message is read from. */
export const OUTBOX_COLUMNS =
  'id, event, task_id, batch_id, url, snapshot, body, attempts, next_attempt_at, created_at';

export function apiKeyRecordOf(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    role: row.role,
    name: row.name,
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
  };
}

export function webhookMessageOf(r: OutboxRow): WebhookMessage {
  return {
    id: r.id,
    event: r.event,
    taskId: r.task_id,
    batchId: r.batch_id,
    url: r.url,
    snapshot: JSON.parse(r.snapshot) as Record<string, unknown>,
    body: r.body,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
  };
}
