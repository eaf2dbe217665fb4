import type {
  ApiKeyRecord,
  KeyRole,
  ServiceStore,
  StoreOptions,
  WebhookAttempt,
  WebhookCounts,
  WebhookMessage,
} from '../../spec/index.ts';
import { KeyRowCheck } from './pg-api-key-macs.ts';
import * as service from './pg-service.ts';
import type { Sql } from './pg-sql.ts';
import { PgStoreBase } from './pg-store-base.ts';

/**
 * The ServiceStore half of the PostgreSQL store (API keys, the webhook outbox), on the same pool and schema as its
 * tasks, so that a task's status change and its webhook commit together. PostgresTaskStore extends it.
 */
export abstract class PgServiceStore extends PgStoreBase implements ServiceStore {
  readonly #keyRows = new KeyRowCheck(this.auditKey);

  createApiKey(
    key: { id: string; keyHash: string; tenant: string; role: KeyRole; name?: string | null },
    options: StoreOptions & { now?: number } = {},
  ): Promise<ApiKeyRecord> {
    return this.keyed(options, (sql, auditKey, now) => service.insertApiKey(sql, auditKey, key, now));
  }

  findApiKey(keyHash: string, options: StoreOptions = {}): Promise<ApiKeyRecord | null> {
    return this.#one(options.signal, (sql) => service.findApiKey(sql, keyHash, this.#keyRows));
  }

  listApiKeys(options: StoreOptions = {}): Promise<ApiKeyRecord[]> {
    return this.#one(options.signal, (sql) => service.listApiKeys(sql));
  }

  revokedApiKeys(ids: readonly string[], options: StoreOptions = {}): Promise<string[]> {
    return this.#one(options.signal, (sql) => service.revokedApiKeys(sql, ids));
  }

  revokeApiKey(id: string, options: StoreOptions & { now?: number } = {}): Promise<ApiKeyRecord> {
    return this.keyed(options, (sql, auditKey, now) => service.revokeApiKey(sql, auditKey, id, now));
  }

  dueWebhooks(
    options: StoreOptions & { now: number; limit: number; claim?: { owner: string; leaseMs: number } },
  ): Promise<WebhookMessage[]> {
    const { now, limit, claim } = options;
    const read = (sql: Sql) => service.dueWebhooks(sql, now, limit, claim);
    return claim === undefined ? this.#one(options.signal, read) : this.run(options.signal, read);
  }

  releaseWebhook(id: string, owner: string, options: StoreOptions = {}): Promise<void> {
    return this.#one(options.signal, (sql) => service.releaseWebhook(sql, id, owner));
  }

  recordWebhookAttempt(
    id: string,
    attempt: WebhookAttempt & { readonly body: string },
    options: StoreOptions & { now?: number } = {},
  ): Promise<void> {
    const now = options.now ?? Date.now();
    return this.#one(options.signal, (sql) => service.recordWebhookAttempt(sql, id, attempt, now));
  }

  webhookCounts(options: StoreOptions = {}): Promise<WebhookCounts> {
    return this.#one(options.signal, (sql) => service.webhookCounts(sql));
  }

  nextWebhookAt(options: StoreOptions = {}): Promise<number | null> {
    return this.#one(options.signal, (sql) => service.nextWebhookAt(sql));
  }

  /** Each method but a claim is one statement: straight on the pool. */
  #one<T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.run(signal, fn, true);
  }
}
