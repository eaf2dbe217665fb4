import type { Runtime } from '../api/index.ts';
import { createService } from '../service/index.ts';
import type { CreateServiceOptions, ServiceConfig, ServiceCore } from '../service/index.ts';
import { CONSOLE_NOT_BUILT, consoleBuilt } from './console-files.ts';
import type { ConsoleOptions } from './console-files.ts';
import { listenFirst } from './listen-first.ts';
import type { EarlyListener } from './listen-first.ts';
import type { buildServer as BuildServer } from './build-server.ts';
import { checkNoAuthBinding } from '../service/config-origin.ts';
import { originGuardFor } from './origin-guard.ts';
import { dbForLog } from '../service/db-for-log.ts';

export interface Service {
  /** `http://host:port` it listens on. */
  readonly address: string;
  readonly config: ServiceConfig;
  readonly runtime: Runtime;
  readonly store: ServiceCore['store'];
  /** Stops accepting, pauses running tasks (`shutdown`; any live server resumes them), closes everything. */
  close(): Promise<void>;
}

export interface StartServiceOptions extends CreateServiceOptions {
  /** Serves the web console at `/` from this built directory (`codecall serve`: dist/console). */
  readonly console?: ConsoleOptions;
  /** The port, bound already (`codecall serve` binds it before loading the rest); default: bound here first. */
  readonly listener?: EarlyListener;
}

/**
 * One `codecall serve`: the service's core (src/service) behind the HTTP API. The port is bound first (a taken
 * one is PORT_IN_USE before the database is opened), the API is served as soon as it is built, and tasks are
 * claimed once the sandboxes are ready (until then /readyz answers 503 STARTING). Resolves once it claims.
 */
export async function startService(config: ServiceConfig, options: StartServiceOptions): Promise<Service> {
  const { log } = options;
  checkNoAuthBinding(config);
  const listener =
    options.listener ?? (await listenFirst({ port: config.port, host: config.host, limits: config }));
  let core: ServiceCore;
  try {
    core = await createService(config, options);
  } catch (e) {
    await listener.close();
    throw e;
  }
  const { runtime, store } = core;
  let closing: Promise<void> | undefined;
  let started = false;
  // The sandboxes warm up (and claims begin once they are ready) while the API is loaded and built: the port is
  // ours already, and the HTTP side (fastify and its schemas) is what a start spends most of its time on.
  const sandboxes = core.start().then(() => {
    started = true;
  });
  sandboxes.catch(() => undefined);
  let buildServer: typeof BuildServer;
  try {
    ({ buildServer } = await import('./build-server.ts'));
  } catch (e) {
    await core.close().catch(() => undefined);
    await listener.close();
    throw e;
  }
  const app = buildServer({
    runtime,
    store,
    bodyLimit: config.bodyLimitBytes,
    streams: {
      bufferBytes: config.streamBufferBytes,
      maxPerKey: config.maxStreamsPerKey,
      maxPerTenant: config.maxStreamsPerTenant,
    },
    requestShare: {
      share: config.tenantRequestShare,
      burstMs: config.tenantRequestBurstMs,
      maxHeld: config.maxHeldRequestsPerTenant,
      maxWaitMs: config.maxRequestWaitMs,
    },
    metrics: core.metrics,
    metricsToken: config.metricsToken,
    keys: store,
    ready: () => closing === undefined,
    starting: () => !started,
    ...(core.authenticate ? { authenticate: core.authenticate } : {}),
    checkCallback: core.checkCallback,
    // Read per request: the list follows an MCP server's changes.
    get tools() {
      return core.tools;
    },
    origin: originGuardFor(config),
    ...(options.console ? { console: options.console } : {}),
  });
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      const stopped = listener.close();
      await app.close();
      await core.close();
      await stopped;
    })());
  try {
    if (options.console && !consoleBuilt(options.console.root)) log(`WARNING: ${CONSOLE_NOT_BUILT}`);
    await app.ready();
    listener.serve((req, res) => app.routing(req, res));
    const { address } = listener;
    log(
      `codecall serving on ${address} (db ${dbForLog(config.db)}, ${core.toolCount} tools, sandboxes ${core.driverNames.join(' and ')}, concurrency ${config.concurrency}` +
        `${config.tenantConcurrency === null ? '' : `, ${config.tenantConcurrency} per tenant`})`,
    );
    if (options.console && consoleBuilt(options.console.root)) log(`web console at ${address}/`);
    await sandboxes;
    return { address, config, runtime, store, close };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}
