import type { StoreOptions } from './task-store.ts';

import type { KeyRole } from './key-role.ts';

export type { KeyRole } from './key-role.ts';

/** An API key as stored: only its SHA-256 is kept; the key itself is shown once, when it is created. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly tenant: string;
  /** `admin` sees and steers every tenant's tasks; `member` only its own tenant's. */
  readonly role: KeyRole;
  readonly name: string | null;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export type WebhookEvent =
  'task.paused' | 'task.succeeded' | 'task.failed' | 'task.cancelled' | 'batch.completed';

/** A webhook waiting in the durable outbox (written in the transaction of the status change it reports). */
export interface WebhookMessage {
  /** Also the `webhook-id` header: stable over retries, so receivers can deduplicate. */
  readonly id: string;
  readonly event: WebhookEvent;
  readonly taskId: string | null;
  readonly batchId: string | null;
  readonly url: string;
  /** The task's columns at the change: { status, pause_reason, error, result, at }. */
  readonly snapshot: Readonly<Record<string, unknown>>;
  /** The body sent at the first attempt, kept so every retry sends the same bytes. */
  readonly body: string | null;
  readonly attempts: number;
  /** Epoch ms. */
  readonly nextAttemptAt: number;
  /** Epoch ms. */
  readonly createdAt: number;
}

export type WebhookAttempt =
  | { readonly outcome: 'delivered' }
  | { readonly outcome: 'retry'; readonly nextAttemptAt: number; readonly error: string }
  | { readonly outcome: 'failed'; readonly error: string };

export interface WebhookCounts {
  readonly pending: number;
  readonly delivered: number;
  readonly failed: number;
}

/**
 * What the service keeps beside the tasks: API keys and the webhook outbox. The SQLite store implements it on
 * the same file as its TaskStore (one transaction can cover a task and its webhook).
 */
export interface ServiceStore {
  createApiKey(
    key: { id: string; keyHash: string; tenant: string; role: KeyRole; name?: string | null },
    options?: StoreOptions & { now?: number },
  ): Promise<ApiKeyRecord>;
  /** The live (not revoked) key with this hash. */
  findApiKey(keyHash: string, options?: StoreOptions): Promise<ApiKeyRecord | null>;
  listApiKeys(options?: StoreOptions): Promise<ApiKeyRecord[]>;
  /** Which of these key ids are revoked (one query for any number: the servers' per-tick revocation check). */
  revokedApiKeys(ids: readonly string[], options?: StoreOptions): Promise<string[]>;
  /** NOT_FOUND for an unknown id; revoking twice keeps the first time. */
  revokeApiKey(id: string, options?: StoreOptions & { now?: number }): Promise<ApiKeyRecord>;

  /**
   * Pending messages due at `now`, oldest first. With `claim`, only those no other dispatcher holds, and they are
   * claimed for `leaseMs` in the same transaction, so dispatchers of several servers never send one message at
   * once (a claim of a dispatcher that died expires).
   */
  dueWebhooks(
    options: StoreOptions & { now: number; limit: number; claim?: { owner: string; leaseMs: number } },
  ): Promise<WebhookMessage[]>;
  /** Gives up a claim without an attempt (delivery cut short by a shutdown): the message is due again at once. */
  releaseWebhook(id: string, owner: string, options?: StoreOptions): Promise<void>;
  /** Records one delivery attempt (and ends its claim); `body` is kept from the first attempt on. */
  recordWebhookAttempt(
    id: string,
    attempt: WebhookAttempt & { readonly body: string },
    options?: StoreOptions & { now?: number },
  ): Promise<void>;
  webhookCounts(options?: StoreOptions): Promise<WebhookCounts>;
  /** Earliest `nextAttemptAt` of a pending message, or null. */
  nextWebhookAt(options?: StoreOptions): Promise<number | null>;
}
