import { CodecallError } from '../errors/index.ts';
import type { SubmitInput } from '../api/index.ts';

/**
 * The most a task may ask for (ADR 0023), in the units of the HTTP API: an operator bounds what one tenant's task
 * can take of the host. A request above a ceiling is refused (never clamped), so the caller learns the bound.
 */
export interface LimitCeilings {
  readonly maxTimeoutSeconds?: number;
  readonly maxCpuSeconds?: number;
  readonly maxMemoryMb?: number;
  readonly maxPriority?: number;
  /** How far ahead of submission a deadline may lie. */
  readonly maxDeadlineSeconds?: number;
  readonly maxRetries?: number;
}

function above(field: string, ceiling: number, unit: string): never {
  throw new CodecallError(
    'INVALID_ARGUMENT',
    `${field} must be at most ${ceiling}${unit} (the service's ceiling)`,
    {
      details: { field, ceiling },
    },
  );
}

/** Refuses a submission that asks for more than a ceiling; `now` is when it is submitted (for the deadline). */
export function checkCeilings(input: SubmitInput, ceilings: LimitCeilings, now: number): void {
  const l = input.limits;
  const over = (v: number | undefined, ceiling: number | undefined, scale: number): ceiling is number =>
    typeof v === 'number' && ceiling !== undefined && v > ceiling * scale;
  if (over(l?.timeoutMs, ceilings.maxTimeoutSeconds, 1000)) {
    above('tool_constraints.timeout_seconds', ceilings.maxTimeoutSeconds, ' s');
  }
  if (over(l?.cpuMs, ceilings.maxCpuSeconds, 1000))
    above('tool_constraints.cpu_seconds', ceilings.maxCpuSeconds, ' s');
  if (over(l?.memoryBytes, ceilings.maxMemoryMb, 1024 * 1024)) {
    above('tool_constraints.max_memory_mb', ceilings.maxMemoryMb, ' MiB');
  }
  if (over(input.priority, ceilings.maxPriority, 1)) above('priority', ceilings.maxPriority, '');
  if (over(input.maxRetries, ceilings.maxRetries, 1)) above('max_retries', ceilings.maxRetries, '');
  // Relative (deadline_seconds) exactly; absolute from the runtime's clock, read after the caller's.
  const ahead = input.deadlineAt === undefined ? undefined : input.deadlineAt - now;
  if (
    over(input.deadlineSeconds, ceilings.maxDeadlineSeconds, 1) ||
    over(ahead, ceilings.maxDeadlineSeconds, 1000)
  ) {
    above('deadline_seconds', ceilings.maxDeadlineSeconds, ' s');
  }
}
