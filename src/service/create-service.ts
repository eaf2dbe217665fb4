import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { agentForModel } from '../agent/index.ts';
import type { CallbackCheck, Runtime } from '../api/index.ts';
import { newApiKey } from '../auth/api-keys.ts';
import { keyAuthenticator } from '../auth/key-authenticator.ts';
import { createRuntime } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { createMetrics } from '../metrics/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { ModelConfig } from '../model/index.ts';
import { availableDrivers, typeScriptLowering } from '../sandbox/index.ts';
import type { Authenticate, ToolDefinition } from '../spec/index.ts';
import { isPostgresUrl } from '../store/postgres/pg-url.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import { connectMcpServers } from '../mcp/index.ts';
import { FollowingTools } from './following-tools.ts';
import type { ServiceConfig } from './config.ts';
import { sandboxWorkerCount } from './config-sandbox.ts';
import { checkWebhookUrl, createWebhookDispatcher, webhookKey } from './webhooks/index.ts';
import { openServiceStore } from './open-service-store.ts';
import type { ServiceDatabase } from './service-database.ts';
import { serviceBudgetCeilings } from './service-budgets.ts';
import { serviceEgress, serviceNetworkDefaults, serviceNetworkPolicies } from './service-egress.ts';
import { serviceToolLimits } from './config-tool-limits.ts';

/** What one `codecall serve` runs besides its HTTP server: store, sandboxes, runtime, metrics, webhook outbox. */
export interface ServiceCore {
  readonly config: ServiceConfig;
  readonly runtime: Runtime;
  readonly store: ServiceDatabase;
  readonly metrics: Metrics;
  /** Resolves API keys; undefined under --insecure-no-auth (every caller is admin). */
  readonly authenticate: Authenticate | undefined;
  /** The callback URLs this service delivers webhooks to (none without a signing secret). */
  readonly checkCallback: CallbackCheck;
  /** Tools loaded (for the start-up line). */
  readonly toolCount: number;
  /** The tools programs may call, in definition order (GET /api/v1/tools lists them). */
  readonly tools: readonly ToolDefinition[];
  /** The sandbox drivers, by name. */
  readonly driverNames: readonly string[];
  /** Waits for the sandboxes, then starts the runtime's loop and the webhook outbox. */
  start(): Promise<void>;
  /** Pauses running tasks (`shutdown`; any live server on the database resumes them) and closes everything, once. */
  close(): Promise<void>;
}

export interface CreateServiceOptions {
  /** One line per start-up fact and warning (the CLI writes them to stderr). */
  readonly log: (line: string) => void;
  /** Lines of a debug level (each task run's end, in its context: a structured log names task, trace, span). */
  readonly debugLog?: (line: string) => void;
  /** Tools besides (or instead of) `config.tools`. */
  readonly tools?: readonly ToolDefinition[];
  /** The model of instruction tasks (see loadModelConfig); without one they fail with MODEL_NOT_CONFIGURED. */
  readonly model?: ModelConfig | null;
  /** Where `egressSecrets` values are read (the CLI passes process.env); none: no secret can be bound. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The composition root of the service's core; the HTTP server over it is src/http/serve.ts. */
/** The id of the admin key a first start makes (one per database, whichever server makes it). */
export const BOOTSTRAP_KEY_ID = 'key_bootstrap';

export async function createService(
  config: ServiceConfig,
  options: CreateServiceOptions,
): Promise<ServiceCore> {
  if (config.mcpServers.length === 0) return (await composeService(config, options)).core;
  // The MCP servers' tools serve beside the others while the service lives (ADR 0047).
  let refresh: (() => void) | undefined;
  const mcp = await connectMcpServers({
    servers: config.mcpServers,
    // New tasks get the new list; a task begun before keeps the tools it began with (FollowingTools).
    onToolsChanged: (server) => {
      const count = mcp.servers.find((s) => s.name === server)?.tools.length ?? '?';
      try {
        refresh?.();
        options.log(`MCP server ${server} changed its tools (now ${count}): new tasks get them`);
      } catch (e) {
        options.log(
          `MCP server ${server} changed its tools (now ${count}), refused: ${(e as Error).message}; the earlier ones are served`,
        );
      }
    },
  });
  for (const s of mcp.servers) {
    options.log(
      `MCP server ${s.name} (${s.serverName ?? '?'} ${s.serverVersion ?? ''}, protocol ${s.protocolVersion ?? '?'}): ${s.tools.length} tools as tools.${s.name}.*`,
    );
  }
  try {
    // The servers are closed after the core (its runtime pauses the running tasks first).
    const composed = await composeService(config, options, {
      tools: () => mcp.tools,
      close: () => mcp.close(),
    });
    refresh = composed.refresh;
    return composed.core;
  } catch (e) {
    await mcp.close();
    throw e;
  }
}

/**
 * The core, and `refresh()`, which serves the tools again from `mcp.tools()` (placed after `options.tools`, before
 * the tools module's) to the tasks created from then on.
 */
async function composeService(
  config: ServiceConfig,
  options: CreateServiceOptions,
  mcp: { tools: () => readonly ToolDefinition[]; close: () => Promise<void> } | null = null,
): Promise<{ core: ServiceCore; refresh: () => void }> {
  const { log } = options;
  // A bad secret stops the start, before anything is opened.
  if (config.webhookSecret !== null) webhookKey(config.webhookSecret);
  const egress = serviceEgress(config, options.env ?? {}, log);
  const networkPolicies = serviceNetworkPolicies(config);
  const networkDefaults = serviceNetworkDefaults(config, networkPolicies);
  const toolLimits = serviceToolLimits(config);
  const moduleTools = config.tools ? await loadToolsModule(config.tools) : [];
  const toolsNow = (): ToolDefinition[] => [
    ...(options.tools ?? []),
    ...(mcp?.tools() ?? []),
    ...moduleTools,
  ];
  const tools = toolsNow();
  if (!isPostgresUrl(config.db)) await mkdir(dirname(config.db), { recursive: true });
  const { store, observeHealth } = await openServiceStore(config.db, log, {
    auditKeyFile: config.auditKeyFile,
    postgres: {
      poolSize: config.postgresPoolSize,
      statementTimeoutMs: config.postgresStatementTimeoutMs,
      idleInTransactionTimeoutMs: config.postgresIdleInTransactionTimeoutMs,
      schema: config.postgresSchema,
    },
  });
  // The metrics come first: the driver and the runtime report to them through their observers.
  const metrics = createMetrics({ store });
  observeHealth(metrics);
  const { drivers, unavailable } = await availableDrivers({
    observer: metrics.sandboxObserver,
    // A thread per run slot (a CPU-bound guest holds its thread, never another run's), at a lower priority than
    // the event loop (ADR 0033).
    quickjs: { workers: sandboxWorkerCount(config), threadNice: config.sandboxNice },
    python: config.python
      ? { warm: config.pythonWarm, ...(config.pythonForkServer ? { forkServer: true } : {}) }
      : false,
  });
  const registry = new FollowingTools(tools);
  const model = options.model ?? null;
  const runtime = createRuntime({
    store,
    egress,
    egressMaxRequests: config.egressMaxRequests,
    ...(networkPolicies === undefined ? {} : { egressPolicies: networkPolicies }),
    ...(networkDefaults === undefined ? {} : { egressDefaults: networkDefaults }),
    ...toolLimits,
    observer: metrics.runtimeObserver,
    drivers,
    tools: registry,
    agent: agentForModel(model, registry.definitions, {
      rerunReads: config.agentRerunReads,
      lowering: typeScriptLowering,
      streamValidation: config.modelStreamValidation,
      ...(config.modelResponseConstraint === null
        ? {}
        : { responseConstraint: config.modelResponseConstraint }),
    }),
    concurrency: config.concurrency,
    leaseMs: config.leaseMs,
    toolUnavailableRetries: config.toolUnavailableRetries,
    toolUnavailableRetryBaseMs: config.toolUnavailableRetryBaseMs,
    log,
    ...(options.debugLog ? { debugLog: options.debugLog } : {}),
    // The operator's hard cap replaces the soft share; a no-auth server has one tenant, so no share to keep.
    ...(config.tenantConcurrency === null
      ? config.insecureNoAuth
        ? {}
        : {
            tenantShare: Math.max(1, Math.ceil(config.concurrency * config.tenantShare)),
            tenantReserve: config.tenantReserve,
          }
      : { tenantConcurrency: config.tenantConcurrency }),
    ceilings: {
      maxTimeoutSeconds: config.maxTimeoutSeconds,
      maxCpuSeconds: config.maxCpuSeconds,
      maxMemoryMb: config.maxMemoryMb,
      maxPriority: config.maxPriority,
      maxDeadlineSeconds: config.maxDeadlineSeconds,
      maxRetries: config.maxRetries,
      maxCodeBytes: config.maxCodeBytes,
      maxMetadataBytes: config.maxMetadataBytes,
      maxLiveTasksPerTenant: config.maxLiveTasksPerTenant,
      ...serviceBudgetCeilings(config),
      ...(networkPolicies === undefined ? {} : { networkPolicies }),
    },
    pausedVmBudgetBytes: config.pausedVmBudgetBytes,
    sizes: {
      maxToolArgumentBytes: config.maxToolArgumentBytes,
      maxToolResultBytes: config.maxToolResultBytes,
    },
    journalLimits: { maxBytes: config.maxJournalBytes, maxEntries: config.maxJournalEntries },
    // Decided in the runtime, so every path is checked (ADR 0031); each tool's own rules only tighten them.
    approvals: {
      roles: config.approverRoles,
      separation: config.approvalSeparation,
      ttlSeconds: config.approvalTtlSeconds,
    },
  });
  metrics.watch(runtime);
  let closing: Promise<void> | undefined;
  let webhooks: ReturnType<typeof createWebhookDispatcher> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      try {
        await runtime.close({ pauseRunning: true, timeoutMs: config.shutdownTimeoutMs });
        // Messages cut short stay in the outbox and go out after the next start.
        await webhooks?.close();
        await Promise.all(drivers.map((d) => d.close()));
        metrics.close();
        await store.close();
      } finally {
        await mcp?.close();
      }
    })());
  try {
    if (config.insecureNoAuth) {
      log('WARNING: --insecure-no-auth: no API keys are checked; every caller is admin. For local use only.');
    } else if ((await store.listApiKeys()).length === 0) {
      // First start: one admin key, shown once, so the service is usable and still closed to others. Its id is
      // fixed, so of several servers starting together on an empty database one makes it and the others see so.
      const key = { ...newApiKey(), id: BOOTSTRAP_KEY_ID };
      const made = await store
        .createApiKey({ ...key, tenant: 'default', role: 'admin', name: 'bootstrap' })
        .then(
          () => true,
          async (e: unknown) => {
            if ((await store.listApiKeys()).some((k) => k.id === BOOTSTRAP_KEY_ID)) return false;
            throw e;
          },
        );
      if (made) {
        log(`no API keys yet: created admin key ${key.id} for tenant "default" (shown once):`);
        log(`  ${key.key}`);
        log(
          isPostgresUrl(config.db)
            ? 'more with: POST /api/v1/keys with this key (codecall keys works on SQLite files only)'
            : 'more with: codecall keys create --tenant NAME --db PATH',
        );
      } else {
        log(
          'no API keys yet: another server made the bootstrap admin key at the same moment (it printed it)',
        );
      }
    }
    webhooks =
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
  } catch (e) {
    await runtime.close({ pauseRunning: true }).catch(() => undefined);
    await Promise.all(drivers.map((d) => d.close().catch(() => undefined)));
    await store.close();
    throw e;
  }
  const core: ServiceCore = {
    config,
    runtime,
    store,
    metrics,
    authenticate: config.insecureNoAuth ? undefined : keyAuthenticator(store),
    checkCallback: callbackPolicy(config),
    get toolCount() {
      return registry.definitions.length;
    },
    get tools() {
      return registry.definitions;
    },
    driverNames: drivers.map((d) => d.name),
    start: async () => {
      await Promise.all(drivers.map((d) => d.ready()));
      runtime.start();
      webhooks?.start();
    },
    close,
  };
  return { core, refresh: () => registry.replace(toolsNow()) };
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
