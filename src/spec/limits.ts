import { CodecallError } from '../errors/index.ts';
import type { ExecutionLimits } from './sandbox.ts';

export const DEFAULT_LIMITS: Readonly<ExecutionLimits> = Object.freeze({
  timeoutMs: 30_000,
  memoryBytes: 64 * 1024 * 1024,
  outputBytes: 1024 * 1024,
  resultBytes: 4 * 1024 * 1024,
  maxToolCalls: 10_000,
  maxConcurrentToolCalls: 16,
  sourceBytes: 1024 * 1024,
});

/** Limits without a default: unset, another bounds what they would (cpuMs: the wall clock). */
const OPTIONAL_LIMITS: ReadonlySet<string> = new Set(['cpuMs', 'toolArgumentBytes']);

/** The CPU time an execution may use: its own budget, or the wall-clock one. */
export function cpuBudgetMs(limits: Readonly<ExecutionLimits>): number {
  return limits.cpuMs ?? limits.timeoutMs;
}

/** Smallest heap a QuickJS VM can start in; below it the runtime itself cannot initialise. */
export const MIN_MEMORY_BYTES = 2 * 1024 * 1024;

/** Merges overrides onto defaults and rejects nonsense with INVALID_ARGUMENT naming the field. */
export function resolveLimits(
  overrides: Partial<ExecutionLimits> | undefined,
  defaults: Readonly<ExecutionLimits> = DEFAULT_LIMITS,
): Readonly<ExecutionLimits> {
  if (overrides === undefined) return defaults;
  const limits: ExecutionLimits = { ...defaults };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) continue;
    if (!Object.hasOwn(defaults, key) && !OPTIONAL_LIMITS.has(key)) {
      throw new CodecallError('INVALID_ARGUMENT', `unknown limit "${key}"`, { details: { field: key } });
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new CodecallError('INVALID_ARGUMENT', `limit "${key}" must be a positive number`, {
        details: { field: key },
      });
    }
    limits[key as keyof ExecutionLimits] = Math.floor(value);
  }
  if (limits.memoryBytes < MIN_MEMORY_BYTES) {
    throw new CodecallError('INVALID_ARGUMENT', `limit "memoryBytes" must be at least ${MIN_MEMORY_BYTES}`, {
      details: { field: 'memoryBytes' },
    });
  }
  return limits;
}

/**
 * What one log entry costs against `outputBytes` besides its text and newline: the host keeps, streams and
 * journals every entry, so a million empty lines are not free (at the default 1 MiB, at most ~61,000 entries).
 */
export const LOG_ENTRY_OVERHEAD_BYTES = 16;

/** The bytes a log entry counts against `outputBytes`: its UTF-8 text, its newline and the entry's overhead. */
export function logEntryBytes(message: string): number {
  return Buffer.byteLength(message) + 1 + LOG_ENTRY_OVERHEAD_BYTES;
}

/** Bounds on one task's whole journal (ADR 0029), counted by the store as it appends. */
export interface JournalLimits {
  /** Most UTF-8 bytes of entry data the journal may hold. */
  readonly maxBytes?: number;
  /** Most entries the journal may hold. */
  readonly maxEntries?: number;
}
