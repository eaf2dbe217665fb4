import { pino } from 'pino';
import { logFields } from '../telemetry/index.ts';
import { ensureContextManager } from './telemetry-provider.ts';
import { LOG_LEVELS } from './config-otel.ts';

export interface ServiceLogOptions {
  readonly format: 'text' | 'json';
  readonly level: (typeof LOG_LEVELS)[number];
  /** Where a finished line goes (stderr), newline included. */
  readonly write: (text: string) => void;
}

/**
 * The service's diagnostic log as the line function the service takes. `text`: each line as it is (the CLI's
 * long-standing form); `json`: pino's JSON, one object a line, with `task_id`, `trace_id` and `span_id` wherever
 * the line was written inside a task's run or a span. Service lines are `info`, a run's end `debug`.
 */
export function createServiceLog(options: ServiceLogOptions): ServiceLog {
  const order: readonly string[] = LOG_LEVELS;
  const shown = (level: string) => order.indexOf(level) >= order.indexOf(options.level);
  if (options.format === 'text') {
    const line = (level: string) => (text: string) => {
      if (shown(level)) options.write(`${text}\n`);
    };
    return { log: line('info'), debug: line('debug') };
  }
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
  return { log: (text) => logger.info(text), debug: (text) => logger.debug(text) };
}

/** The service's log: `info` lines (start-up facts, warnings) and `debug` ones (each task run's end). */
export interface ServiceLog {
  readonly log: (line: string) => void;
  readonly debug: (line: string) => void;
}
