import type { Runtime } from '../api/index.ts';
import { createService } from '../service/index.ts';
import type { CreateServiceOptions, ServiceConfig, ServiceCore } from '../service/index.ts';
import { buildServer } from './build-server.ts';
import { CONSOLE_NOT_BUILT, consoleBuilt } from './console-route.ts';
import type { ConsoleOptions } from './console-route.ts';

export interface Service {
  /** `http://host:port` it listens on. */
  readonly address: string;
  readonly config: ServiceConfig;
  readonly runtime: Runtime;
  readonly store: ServiceCore['store'];
  /** Stops accepting, pauses running tasks (`shutdown`; they resume on the next start), closes everything. */
  close(): Promise<void>;
}

export interface StartServiceOptions extends CreateServiceOptions {
  /** Serves the web console at `/` from this built directory (`codecall serve`: dist/console). */
  readonly console?: ConsoleOptions;
}

/** One `codecall serve`: the service's core (src/service) behind the HTTP API, listening. */
export async function startService(config: ServiceConfig, options: StartServiceOptions): Promise<Service> {
  const { log } = options;
  const core = await createService(config, options);
  const { runtime, store } = core;
  let closing: Promise<void> | undefined;
  try {
    const app = buildServer({
      runtime,
      store,
      bodyLimit: config.bodyLimitBytes,
      metrics: core.metrics,
      keys: store,
      ready: () => closing === undefined,
      ...(core.authenticate ? { authenticate: core.authenticate } : {}),
      checkCallback: core.checkCallback,
      ...(options.console ? { console: options.console } : {}),
    });
    if (options.console && !consoleBuilt(options.console.root)) log(`WARNING: ${CONSOLE_NOT_BUILT}`);
    await core.start();
    const address = await app.listen({ port: config.port, host: config.host });
    log(
      `codecall serving on ${address} (db ${config.db}, ${core.toolCount} tools, sandboxes ${core.driverNames.join(' and ')}, concurrency ${config.concurrency}` +
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
          await core.close();
        })()),
    };
  } catch (e) {
    await core.close().catch(() => undefined);
    throw e;
  }
}
