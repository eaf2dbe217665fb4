import type { Metrics } from '../metrics/index.ts';
import type { ArtifactStore, ServiceStore, TaskStore } from '../spec/index.ts';

/**
 * What the service needs of its database, whichever engine holds it: tasks and journals, API keys and the
 * webhook outbox, artifacts; `checkHealth` (optional in TaskStore) drives /readyz when the store has it.
 */
export interface ServiceDatabase extends TaskStore, ServiceStore, ArtifactStore {}

const SERVICE_STORE_METHODS = [
  'createApiKey',
  'findApiKey',
  'listApiKeys',
  'revokedApiKeys',
  'revokeApiKey',
  'dueWebhooks',
  'releaseWebhook',
  'recordWebhookAttempt',
  'webhookCounts',
  'nextWebhookAt',
] as const satisfies readonly (keyof ServiceStore)[];

/** True when the store keeps API keys and the webhook outbox (a store opened by URL may not, yet). */
export function isServiceStore(store: object): store is ServiceStore {
  return SERVICE_STORE_METHODS.every(
    (name) => typeof (store as Record<string, unknown>)[name] === 'function',
  );
}

export interface OpenServiceStoreOptions {
  /** SQLite only: the audit key's file (default `<db>.audit-key`). */
  readonly auditKeyFile?: string | null;
  /** PostgreSQL only (`db` a postgres:// URL). */
  readonly postgres?: {
    readonly poolSize?: number;
    readonly statementTimeoutMs?: number;
    readonly idleInTransactionTimeoutMs?: number;
    readonly schema?: string;
  };
}

export interface OpenedServiceStore {
  readonly store: ServiceDatabase;
  /** Counts the faults the start found, once the metrics exist (they are made over the store). */
  readonly observeHealth: (metrics: Metrics) => void;
}
