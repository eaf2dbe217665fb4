import type { Runtime } from '../api/index.ts';
import { createService } from '../service/index.ts';
import type { CreateServiceOptions, ServiceConfig, ServiceCore } from '../service/index.ts';
import { buildServer } from './build-server.ts';
import { CONSOLE_NOT_BUILT, consoleBuilt } from './console-route.ts';
import type { ConsoleOptions } from './console-route.ts';
import { listenFirst } from './listen-first.ts';
import type { EarlyListener } from './listen-first.ts';

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
 * claimed only once the sandboxes are ready (until then /readyz answers 503 STARTING). Resolves once it claims.
 */
export async function startService(config: ServiceConfig, options: StartServiceOptions): Promise<Service> {
  const { log } = options;
  const listener = options.listener ?? (await listenFirst({ port: config.port, host: config.host }));
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
  const app = buildServer({
    runtime,
    store,
    bodyLimit: config.bodyLimitBytes,
    metrics: core.metrics,
    keys: store,
    ready: () => closing === undefined,
    starting: () => !started,
    ...(core.authenticate ? { authenticate: core.authenticate } : {}),
    checkCallback: core.checkCallback,
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
      `codecall serving on ${address} (db ${config.db}, ${core.toolCount} tools, sandboxes ${core.driverNames.join(' and ')}, concurrency ${config.concurrency}` +
        `${config.tenantConcurrency === null ? '' : `, ${config.tenantConcurrency} per tenant`})`,
    );
    if (options.console && consoleBuilt(options.console.root)) log(`web console at ${address}/`);
    // Claims wait for the sandboxes (a server that dies while starting has leased nothing).
    await core.start();
    started = true;
    return { address, config, runtime, store, close };
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
}
