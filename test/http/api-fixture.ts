// Shared set-up of the HTTP API tests: a real runtime (SQLite file, quickjs driver) behind buildServer with
// Bearer key auth, and helpers to create keys and send requests through fastify's inject.
import { afterAll, beforeAll } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { KeyRole, RuntimeOptions, ToolDefinition } from '../../src/index.ts';
import { keyAuthenticator, newApiKey } from '../../src/service/index.ts';
import { SqliteTaskStore } from '../../src/store/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { CallbackCheck, Runtime } from '../../src/api/index.ts';
import type { StreamOptions } from '../../src/http/sse-stream.ts';
import type { ChangeFeedOptions } from '../../src/http/change-feed.ts';
import type { RequestShareOptions } from '../../src/http/request-share.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import type { Metrics } from '../../src/metrics/index.ts';

/** The tests' paying tool: over 100 needs approval, so one call shows both paths. */
export function payTool(): ToolDefinition {
  return defineTool({
    name: 'pay',
    description: 'pays; over 100 needs approval',
    effect: 'unsafe',
    requiresApproval: (a) => (a as { amount: number }).amount > 100,
    execute: (a) => `paid ${(a as { amount: number }).amount}`,
  });
}

export interface ApiKey {
  readonly id: string;
  readonly key: string;
  readonly headers: { authorization: string };
}

export interface ApiFixture {
  readonly app: ReturnType<typeof buildServer>;
  readonly runtime: Runtime;
  readonly store: SqliteTaskStore;
  /** The store's SQLite file. */
  readonly path: string;
  /** The server's metrics, with `metrics: true`. */
  readonly metrics: Metrics | undefined;
  /** A new key of `tenant` (member unless said otherwise). */
  key(tenant: string, role?: KeyRole): Promise<ApiKey>;
}

export interface ApiFixtureOptions {
  readonly tools?: readonly ToolDefinition[];
  readonly bodyLimit?: number;
  readonly checkCallback?: CallbackCheck;
  /** Whether the runtime runs tasks (default true). */
  readonly start?: boolean;
  /** Runtime options beyond the fixture's (ceilings, concurrency, tenantConcurrency, an agent). */
  readonly runtime?: Pick<
    RuntimeOptions,
    'ceilings' | 'concurrency' | 'tenantConcurrency' | 'approvals' | 'clock' | 'agent'
  >;
  /** The event streams' bounds (buildServer's `streams`). */
  readonly streams?: StreamOptions;
  /** The change feed's tick and stats (buildServer's `feed`). */
  readonly feed?: ChangeFeedOptions;
  /** Each tenant's share of the event loop (buildServer's `requestShare`). */
  readonly requestShare?: RequestShareOptions;
  /** Whether the server feeds metrics (buildServer's `metrics`, on a registry of their own): `fx.metrics`. */
  readonly metrics?: boolean;
}

export function useApiFixture(name: string, options: ApiFixtureOptions = {}): ApiFixture {
  const durable = useDurableFixture(name);
  const fx = {} as { app: ApiFixture['app']; runtime: Runtime; store: SqliteTaskStore; metrics?: Metrics };
  beforeAll(async () => {
    if (!(durable.store instanceof SqliteTaskStore)) throw new Error('the fixture store is not SQLite');
    fx.store = durable.store;
    fx.runtime = createRuntime({
      store: fx.store,
      drivers: [durable.driver],
      tools: new ToolRegistry(options.tools ?? []),
      pollMs: 20,
      ...options.runtime,
    });
    if (options.start !== false) fx.runtime.start();
    if (options.metrics === true) fx.metrics = createMetrics({ store: fx.store, processMetrics: false });
    fx.app = buildServer({
      runtime: fx.runtime,
      store: fx.store,
      authenticate: keyAuthenticator(fx.store),
      keys: fx.store,
      tools: options.tools ?? [],
      ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
      ...(options.checkCallback === undefined ? {} : { checkCallback: options.checkCallback }),
      ...(options.streams === undefined ? {} : { streams: options.streams }),
      ...(options.feed === undefined ? {} : { feed: options.feed }),
      ...(options.requestShare === undefined ? {} : { requestShare: options.requestShare }),
      ...(fx.metrics === undefined ? {} : { metrics: fx.metrics }),
    });
    await fx.app.ready();
  });
  afterAll(async () => {
    await fx.app.close();
    await fx.runtime.close();
  });
  return {
    get app() {
      return fx.app;
    },
    get runtime() {
      return fx.runtime;
    },
    get store() {
      return fx.store;
    },
    get path() {
      return durable.path;
    },
    get metrics() {
      return fx.metrics;
    },
    async key(tenant, role = 'member') {
      const key = newApiKey();
      await fx.store.createApiKey({ id: key.id, keyHash: key.keyHash, tenant, role });
      return { id: key.id, key: key.key, headers: { authorization: `Bearer ${key.key}` } };
    },
  };
}

/** Every task in the store, of every tenant (to see that a refused request stored nothing). */
export async function countTasks(store: SqliteTaskStore): Promise<number> {
  let n = 0;
  for (let cursor: string | undefined; ;) {
    const page = await store.listTasks({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    n += page.tasks.length;
    if (page.nextCursor === null) return n;
    cursor = page.nextCursor;
  }
}

export interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}
