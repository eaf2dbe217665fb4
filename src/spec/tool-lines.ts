import type { ExecutionResult, LogEntry } from './sandbox.ts';

/** The most lines tools log (`ToolContext.log`) that a run's result keeps. */
export const MAX_TOOL_LOG_LINES = 1_000;

/**
 * A run's result with the lines its tools logged after the program's own: the driver collects only the program's,
 * and which line came first across the two is not known.
 */
export function withToolLines(result: ExecutionResult, lines: readonly LogEntry[]): ExecutionResult {
  return lines.length === 0 ? result : { ...result, logs: [...result.logs, ...lines] };
}
