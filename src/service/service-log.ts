import { pino } from 'pino';
import { logFields } from '../telemetry/index.ts';
import { ensureContextManager } from './telemetry-provider.ts';
import type { LOG_LEVELS } from './config-otel.ts';

export interface ServiceLogOptions {
  readonly format: 'text' | 'json';
  readonly level: (typeof LOG_LEVELS)[number];
  /** Where a finished line goes (stderr), newline included. */
  readonly write: (text: string) => void;
}

/**
 * The service's diagnostic log as the line function the service takes. `text`: each line as it is (the CLI's
 * long-standing form); `json`: pino's JSON, one object a line, with `task_id`, `trace_id` and `span_id` wherever
 * the line was written inside a task's run or a span. Service lines are `info`; `logLevel` above it silences them.
 */
export function createServiceLog(options: ServiceLogOptions): (line: string) => void {
  const order = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
  const quiet = order.indexOf(options.level) > order.indexOf('info');
  if (options.format === 'text') return quiet ? () => undefined : (line) => options.write(`${line}\n`);
  // The ids come from the active context: carried through async calls by the context manager.
  ensureContextManager();
  const logger = pino(
    {
      level: options.level,
      base: { service: 'codecall' },
      mixin: () => logFields(),
    },
    { write: (text: string) => options.write(text) },
  );
  return (line) => logger.info(line);
}
