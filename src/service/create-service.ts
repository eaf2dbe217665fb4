import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { agentForModel } from '../agent/index.ts';
import { createRuntime } from '../durable/index.ts';
import type { ModelConfig } from '../model/index.ts';
import type { Runtime } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { buildServer, CONSOLE_NOT_BUILT, consoleBuilt } from '../http/index.ts';
import type { CallbackCheck, ConsoleOptions } from '../http/index.ts';
import { availableDrivers } from '../sandbox/index.ts';
import type { ToolDefinition } from '../spec/index.ts';
import { createSqliteTaskStore } from '../store/index.ts';
import type { SqliteTaskStore } from '../store/index.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import { ToolRegistry } from '../tools/index.ts';
import { newApiKey } from '../auth/api-keys.ts';
import type { ServiceConfig } from './config.ts';
import { keyAuthenticator } from '../auth/key-authenticator.ts';
import { createMetrics } from '../metrics/index.ts';
import { checkWebhookUrl, createWebhookDispatcher, webhookKey } from './webhooks/index.ts';

export interface Service {
  /** `http://host:port` it listens on. */
  readonly address: string;
  readonly config: ServiceConfig;
  readonly runtime: Runtime;
  readonly store: SqliteTaskStore;
  /** Stops accepting, pauses running tasks (`shutdown`; they resume on the next start), closes everything. */
  close(): Promise<void>;
}

export interface StartServiceOptions {
  /** One line per start-up fact and warning (the CLI writes them to stderr). */
  readonly log: (line: string) => void;
  /** Tools besides (or instead of) `config.tools`. */
  readonly tools?: readonly ToolDefinition[];
  /** The model of instruction tasks (see loadModelConfig); without one they fail with MODEL_NOT_CONFIGURED. */
  readonly model?: ModelConfig | null;
  /** Serves the web console at `/` from this built directory (`codecall serve`: dist/console). */
  readonly console?: ConsoleOptions;
}

/** The composition root: the store, sandbox, runtime, HTTP API and webhook outbox of one `codecall serve`. */
export async function startService(config: ServiceConfig, options: StartServiceOptions): Promise<Service> {
  const { log } = options;
  // A bad secret stops the start, before anything is opened.
  if (config.webhookSecret !== null) webhookKey(config.webhookSecret);
  const tools = [...(options.tools ?? []), ...(config.tools ? await loadToolsModule(config.tools) : [])];
  await mkdir(dirname(config.db), { recursive: true });
  const store = await createSqliteTaskStore({ path: config.db });
  // The metrics come first: the driver and the runtime report to them through their observers.
  const metrics = createMetrics({ store });
  const { drivers, unavailable } = await availableDrivers({
    observer: metrics.sandboxObserver,
    python: config.python ? { warm: config.pythonWarm } : false,
  });
  const registry = new ToolRegistry(tools);
  const model = options.model ?? null;
  const runtime = createRuntime({
    store,
    observer: metrics.runtimeObserver,
    drivers,
    tools: registry,
    agent: agentForModel(model, registry.definitions),
    concurrency: config.concurrency,
    leaseMs: config.leaseMs,
    ...(config.tenantConcurrency === null ? {} : { tenantConcurrency: config.tenantConcurrency }),
  });
  metrics.watch(runtime);
  try {
    if (config.insecureNoAuth) {
      log('WARNING: --insecure-no-auth: no API keys are checked; every caller is admin. For local use only.');
    } else if ((await store.listApiKeys()).length === 0) {
      // First start: one admin key, shown once, so the service is usable and still closed to others.
      const key = newApiKey();
      await store.createApiKey({ ...key, tenant: 'default', role: 'admin', name: 'bootstrap' });
      log(`no API keys yet: created admin key ${key.id} for tenant "default" (shown once):`);
      log(`  ${key.key}`);
      log('more with: codecall keys create --tenant NAME --db PATH');
    }
    let closing: Promise<void> | undefined;
    const app = buildServer({
      runtime,
      store,
      bodyLimit: config.bodyLimitBytes,
      metrics,
      keys: store,
      ready: () => closing === undefined,
      ...(config.insecureNoAuth ? {} : { authenticate: keyAuthenticator(store) }),
      checkCallback: callbackPolicy(config),
      ...(options.console ? { console: options.console } : {}),
    });
    const webhooks =
      config.webhookSecret === null
        ? null
        : createWebhookDispatcher({
            store,
            secret: config.webhookSecret,
            allowPrivate: config.allowPrivateWebhooks,
          });
    log(
      model
        ? `instruction tasks ask ${model.model} (${model.provider} at ${model.baseUrl})`
        : 'no model configured: instruction tasks fail with MODEL_NOT_CONFIGURED (set --provider/--model or OPENAI_API_KEY/MISTRAL_API_KEY)',
    );
    if (config.allowPrivateWebhooks)
      log('webhooks may go to loopback and private addresses (--allow-private-webhooks)');
    for (const u of unavailable) log(`the ${u.name} sandbox is not available: ${u.reason}`);
    if (options.console && !consoleBuilt(options.console.root)) log(`WARNING: ${CONSOLE_NOT_BUILT}`);
    await Promise.all(drivers.map((d) => d.ready()));
    runtime.start();
    webhooks?.start();
    const address = await app.listen({ port: config.port, host: config.host });
    log(
      `codecall serving on ${address} (db ${config.db}, ${tools.length} tools, sandboxes ${drivers.map((d) => d.name).join(' and ')}, concurrency ${config.concurrency}` +
        `${config.tenantConcurrency === null ? '' : `, ${config.tenantConcurrency} per tenant`})`,
    );
    if (options.console && consoleBuilt(options.console.root)) log(`web console at ${address}/`);
    return {
      address,
      config,
      runtime,
      store,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await runtime.close({ pauseRunning: true, timeoutMs: config.shutdownTimeoutMs });
          // Messages cut short stay in the outbox and go out after the next start.
          await webhooks?.close();
          await Promise.all(drivers.map((d) => d.close()));
          metrics.close();
          await store.close();
        })()),
    };
  } catch (e) {
    await runtime.close({ pauseRunning: true }).catch(() => undefined);
    await Promise.all(drivers.map((d) => d.close().catch(() => undefined)));
    await store.close();
    throw e;
  }
}

function callbackPolicy(config: ServiceConfig): CallbackCheck {
  return (url, field) => {
    if (config.webhookSecret === null) {
      throw new CodecallError(
        'WEBHOOK_TARGET_REFUSED',
        `${field}: webhooks need a signing secret; start the server with --webhook-secret whsec_...`,
        { details: { field } },
      );
    }
    try {
      checkWebhookUrl(url, { allowPrivate: config.allowPrivateWebhooks });
    } catch (e) {
      if (e instanceof CodecallError) {
        throw new CodecallError(e.code, `${field}: ${e.message}`, { details: { ...e.details, field } });
      }
      throw e;
    }
  };
}
