import { DEFAULT_CONSOLE_ROOT, startService } from '../http/index.ts';
import { loadConfig, loadModelConfig } from '../service/index.ts';
import type { CliIo } from './cli-io.ts';

export interface ServeOptions {
  config?: string;
  port?: string;
  host?: string;
  db?: string;
  tools?: string;
  concurrency?: string;
  tenantConcurrency?: string;
  webhookSecret?: string;
  allowPrivateWebhooks?: boolean;
  insecureNoAuth?: boolean;
  python?: boolean;
  pythonWarm?: string;
  provider?: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
}

export const DEFAULT_DB = 'data/codecall.db';

/**
 * `codecall serve`: the task service on embedded defaults (an SQLite file under ./data, the quickjs driver).
 * Flags win over CODECALL_* variables, which win over the --config file. SIGTERM or SIGINT stops accepting,
 * pauses running tasks (`shutdown`) and exits; they resume on the next start.
 */
export async function serveCommand(
  options: ServeOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const { config: file, python, ...rest } = options;
  // commander sets a --no-x switch to true when absent; only a given --no-python may override the config.
  const flags = python === false ? { ...rest, python } : rest;
  const config = loadConfig({ flags, env, ...(file === undefined ? {} : { file }) });
  const service = await startService(config, {
    log: (line) => io.stderr(`${line}\n`),
    model: loadModelConfig(config, env),
    console: { root: DEFAULT_CONSOLE_ROOT },
  });
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      io.stderr(`${signal}: pausing running tasks and stopping\n`);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await service.close();
  return 0;
}
