import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { registerMetricsRoute } from '../metrics/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { Authenticate, ServiceStore, TaskStore, ToolDefinition } from '../spec/index.ts';
import { registerAuth } from './auth-hook.ts';
import { KeyRevocations } from './key-revocations.ts';
import { ChangeFeed } from './change-feed.ts';
import type { ChangeFeedOptions } from './change-feed.ts';
import { registerRevocationHook } from './revocation-hook.ts';
import { registerRequestShare } from './request-share-hook.ts';
import type { RequestShareOptions } from './request-share-hook.ts';
import { registerBatchRoutes } from './batch-routes.ts';
import { registerControlRoutes } from './control-routes.ts';
import { registerReviseRoute } from './revise-route.ts';
import { registerKeyRoutes } from './key-routes.ts';
import { errorHandler, sendError } from './error-reply.ts';
import { registerOpenApi } from './openapi.ts';
import { sharedSchemas } from './schemas.ts';
import { registerStreamRoute } from './stream-route.ts';
import { sseSettings } from './sse-stream.ts';
import type { StreamOptions } from './sse-stream.ts';
import { idSchema } from './task-schemas.ts';
import { registerTaskRoutes } from './task-routes.ts';
import { registerJsonParser } from './json-body.ts';
import { registerMultipart } from './multipart-task.ts';
import { registerArtifactRoute } from './artifact-route.ts';
import { registerApprovalRoutes } from './approval-routes.ts';
import { registerMeRoute } from './me-route.ts';
import { registerToolsRoute } from './tools-route.ts';
import { registerStatsRoute } from './stats-route.ts';
import { registerMcpRoute } from './mcp-route.ts';
import { registerConsole } from './console-route.ts';
import type { ConsoleOptions } from './console-route.ts';
import { registerTenantStreamRoute } from './tenant-stream-route.ts';
import type { CallbackCheck, Runtime } from '../api/index.ts';
import { liveness, readiness } from './health-routes.ts';
import { LOOPBACK_HOSTS, registerOriginGuard } from './origin-guard.ts';
import type { OriginGuardOptions } from './origin-guard.ts';

export interface ServerOptions {
  readonly runtime: Runtime;
  /** The runtime's store, for the journal views. */
  readonly store: TaskStore;
  /** Largest request body (default 1 MiB). */
  readonly bodyLimit?: number;
  /** Resolves API keys; without it every caller is the admin of tenant `default` (library use, no-auth mode). */
  readonly authenticate?: Authenticate;
  /** Whether the service takes work (GET /readyz answers 503 when not); default always. */
  readonly ready?: () => boolean;
  /** Whether the service is still starting (its sandboxes not ready yet): GET /readyz answers 503 STARTING. */
  readonly starting?: () => boolean;
  /** Serves /api/v1/keys (admin keys manage keys) when given. */
  readonly keys?: ServiceStore;
  /** Refuses callback URLs the service will not deliver to (default: none are accepted). */
  readonly checkCallback?: CallbackCheck;
  /** Serves GET /metrics and counts requests and errors (see src/metrics). */
  readonly metrics?: Metrics;
  /** With `authenticate`, a bearer token that may read GET /metrics besides admin keys (ADR 0032). */
  readonly metricsToken?: string | null;
  /** Serves the web console's built files at `/` (see console-route.ts). */
  readonly console?: ConsoleOptions;
  /** The event streams' bounds: unflushed bytes per stream, streams per key and per tenant (see sse-stream.ts). */
  readonly streams?: StreamOptions;
  /** The change feed every stream listens to: its tick and, for tests, its stats (see change-feed.ts). */
  readonly feed?: ChangeFeedOptions;
  /** The runtime's tools, listed by GET /api/v1/tools (default: none listed). */
  readonly tools?: readonly ToolDefinition[];
  /** Host and Origin checks (origin-guard.ts); default: on for loopback names without `authenticate`, else off. */
  readonly origin?: OriginGuardOptions;
  /** Each tenant's share of the event loop while others are active (request-share.ts); default: no bound. */
  readonly requestShare?: RequestShareOptions;
}

const noCallbacks: CallbackCheck = (_url, field) => {
  throw new CodecallError(
    'WEBHOOK_TARGET_REFUSED',
    `${field}: this server sends no webhooks (no signing secret)`,
    {
      details: { field },
    },
  );
};

/** The HTTP API (fastify) over a durable runtime; `inject` serves tests without a socket. */
export function buildServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    logger: false,
    // Ids are at most 128 characters (idSchema); a longer segment is a 400 like any bad id.
    routerOptions: { maxParamLength: idSchema.maxLength },
    // Router errors (a bad percent-encoding, an over-long segment) get the error envelope too.
    frameworkErrors: (error, request, reply) => void errorHandler(error, request, reply),
    // Strict bodies: a number is not silently a string, an unknown field is an error (not dropped).
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } },
  });
  app.setErrorHandler(errorHandler);
  // First of the hooks: a rebinding Host or another site's page is refused before auth or any route runs.
  registerOriginGuard(
    app,
    options.origin ??
      (options.authenticate === undefined
        ? { allowedHosts: LOOPBACK_HOSTS, allowIpHosts: true, checkOrigin: true }
        : { allowedHosts: null, checkOrigin: false }),
  );
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, 'NOT_FOUND', `no route ${request.method} ${request.url}`, {
      route: `${request.method} ${request.url}`,
    }),
  );
  for (const schema of sharedSchemas) app.addSchema(schema);
  registerOpenApi(app);
  if (options.metrics) {
    registerMetricsRoute(app, options.metrics, {
      ...(options.authenticate ? { authenticate: options.authenticate } : {}),
      token: options.metricsToken ?? null,
    });
  }
  registerAuth(app, options.authenticate);
  registerJsonParser(app);
  // Keys revoked here are seen at once; those revoked by another process on the database within a tick.
  const revocations = new KeyRevocations(options.keys ? { store: options.keys } : {});
  app.addHook('onClose', (_app, done) => {
    revocations.close();
    done();
  });
  registerRevocationHook(app, revocations);
  if (options.requestShare) {
    const { metrics } = options;
    registerRequestShare(app, options.requestShare, metrics ? (s) => metrics.observeHeld(s) : undefined);
  }
  registerMultipart(app, options.bodyLimit ?? 1024 * 1024);
  if (options.console) registerConsole(app, options.console);
  const checkCallback = options.checkCallback ?? noCallbacks;
  // In a plugin, so its routes are registered once the OpenAPI plugin (above) watches for them.
  const streams = sseSettings(options.streams, revocations);
  // One feed for every stream of this server: one store query per tick, however many streams are open.
  const feed = new ChangeFeed(options.runtime, options.store, options.feed);
  app.addHook('onClose', (_app, done) => {
    feed.close();
    done();
  });
  const { runtime, store } = options;
  void app.register((api, _options, done) => {
    api.get('/healthz', () => liveness(options.store, options.runtime));
    api.get('/readyz', () => readiness(options));
    registerTaskRoutes(api, { runtime: options.runtime, store: options.store, checkCallback });
    registerBatchRoutes(api, options.runtime, checkCallback);
    registerControlRoutes(api, options.runtime, options.store);
    registerReviseRoute(api, options.runtime, options.store);
    registerStreamRoute(api, { runtime, store, feed, streams });
    registerArtifactRoute(api, options.store);
    registerApprovalRoutes(api, options.runtime, options.store);
    registerMeRoute(api);
    registerToolsRoute(api, () => options.tools ?? []);
    registerStatsRoute(api, { store });
    // codecall as an MCP server (ADR 0049), behind the same keys.
    registerMcpRoute(api, { runtime, store, tools: () => options.tools ?? [] });
    registerTenantStreamRoute(api, { runtime, store, feed, streams });
    if (options.keys) registerKeyRoutes(api, options.keys, revocations);
    done();
  });
  return app;
}
