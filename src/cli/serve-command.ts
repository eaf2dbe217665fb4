// Only what binding the port needs is loaded up front (config and node:http): the service itself is imported
// once the port is ours, so a server listens in a fraction of a second and a taken port costs nothing.
import { listenFirst } from '../http/listen-first.ts';
import { loadConfig, loadModelConfig } from '../service/config.ts';
import { checkNoAuthBinding } from '../service/config-origin.ts';
import { readMetricsTokenFile } from '../service/config-metrics.ts';
import type { CliIo } from './cli-io.ts';
import { onFirstSigint } from './sigint.ts';

export interface ServeOptions {
  config?: string;
  port?: string;
  host?: string;
  db?: string;
  postgresPoolSize?: string;
  postgresStatementTimeoutMs?: string;
  postgresIdleInTransactionTimeoutMs?: string;
  postgresSchema?: string;
  tools?: string;
  concurrency?: string;
  tenantConcurrency?: string;
  maxJournalBytes?: string;
  maxJournalEntries?: string;
  sandboxWorkers?: string;
  sandboxNice?: string;
  pausedVmBudgetBytes?: string;
  approverRoles?: string;
  approvalSeparation?: boolean;
  agentRerunReads?: boolean;
  approvalTtlSeconds?: string;
  webhookSecret?: string;
  allowPrivateWebhooks?: boolean;
  insecureNoAuth?: boolean;
  allowRemoteNoAuth?: boolean;
  /** --allowed-host, repeatable: joined with commas (the config key's text form). */
  allowedHost?: string[];
  python?: boolean;
  pythonWarm?: string;
  pythonForkServer?: boolean;
  provider?: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  auditKeyFile?: string;
  metricsTokenFile?: string;
}

export const DEFAULT_DB = 'data/codecall.db';

/**
 * `codecall serve`: the task service on embedded defaults (an SQLite file under ./data, the quickjs driver).
 * Flags win over CODECALL_* variables, which win over the --config file. SIGTERM or SIGINT stops accepting,
 * pauses running tasks (`shutdown`: any live server on the database resumes them) and exits.
 */
export async function serveCommand(
  options: ServeOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const { config: file, python, allowedHost, metricsTokenFile, ...given } = options;
  const rest = allowedHost?.length ? { ...given, allowedHosts: allowedHost.join(',') } : given;
  // commander sets a --no-x switch to true when absent; only a given --no-python may override the config.
  const switches = python === false ? { ...rest, python } : rest;
  // The token is read from a file: a flag's value would show in `ps`.
  const flags =
    metricsTokenFile === undefined
      ? switches
      : { ...switches, metricsToken: readMetricsTokenFile(metricsTokenFile) };
  const config = loadConfig({
    flags,
    env,
    ...(metricsTokenFile === undefined
      ? {}
      : { flagSources: { metricsToken: `--metrics-token-file ${metricsTokenFile}` } }),
    ...(file === undefined ? {} : { file }),
  });
  checkNoAuthBinding(config);
  const model = loadModelConfig(config, env);
  // Before anything runs: the core's spans record from the first task on (ADR 0053).
  const { otelSettings } = await import('../service/config-otel.ts');
  const { startTelemetry } = await import('../service/telemetry-provider.ts');
  const { createServiceLog } = await import('../service/service-log.ts');
  const telemetry = startTelemetry(otelSettings(config, env));
  const { log, debug } = createServiceLog({
    format: config.logFormat,
    level: config.logLevel,
    write: (text) => io.stderr(text),
  });
  // Listen first: PORT_IN_USE is found before the database is opened or a task claimed.
  const listener = await listenFirst({ port: config.port, host: config.host, limits: config });
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      io.stderr(`${signal}: pausing running tasks and stopping\n`);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    onFirstSigint(() => stop('SIGINT'));
  });
  const { DEFAULT_CONSOLE_ROOT } = await import('../http/console-files.ts');
  const { startService } = await import('../http/serve.ts');
  const service = await startService(config, {
    log,
    debugLog: debug,
    model,
    env,
    console: { root: DEFAULT_CONSOLE_ROOT },
    listener,
  });
  await stopped;
  await service.close();
  // The spans of the last runs (the shutdown's pauses too) are exported before the exit.
  await telemetry?.shutdown();
  return 0;
}
