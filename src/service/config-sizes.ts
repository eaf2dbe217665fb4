import { z } from 'zod';

/** Bounds on what one tool call carries into the journal (ADR 0027) and on a task's whole journal (ADR 0029). */
export const sizesConfigShape = {
  /** Largest encoded (tagged JSON) arguments of one tool call, in bytes; default 1 MiB (1048576). */
  maxToolArgumentBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 ** 3)
    .default(1024 * 1024),
  /** Largest encoded (tagged JSON) result of one tool call, in bytes; default 1 MiB (1048576). */
  maxToolResultBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 ** 3)
    .default(1024 * 1024),
  /** Most bytes of entry data one task's journal may hold (ADR 0029); default 64 MiB (67108864). */
  // The least is 1024: loadConfig reads a variable as a number when 0, 1 or 1024 would be valid.
  maxJournalBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 ** 3)
    .default(64 * 1024 * 1024),
  /** Most entries one task's journal may hold (ADR 0029); default 100000. */
  maxJournalEntries: z.number().int().min(100).max(100_000_000).default(100_000),
};
