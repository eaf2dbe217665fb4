import { z } from 'zod';

/** Bounds on what one tool call carries into the journal (ADR 0027). */
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
};
