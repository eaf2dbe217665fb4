import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';
import { parseToolQuotas, parseToolRateLimits } from '../spec/index.ts';
import type { ToolQuota, ToolRateLimit } from '../spec/index.ts';

/** A list given as JSON text (the environment's and a flag's form) or as a list (a config file's). */
const jsonList = z
  .preprocess((v) => (typeof v === 'string' ? parseJson(v) : v), z.array(z.unknown()).max(10_000))
  .default([]);

/**
 * Each tenant's limits on tool calls over time (issue 21, ADR 0045), kept in the database so that they hold across
 * restarts and over every server on it. The rules are checked by createService (serviceToolLimits).
 */
export const toolLimitsConfigShape = {
  /**
   * Token buckets, `[{ "tenant": "acme", "tool": "web.search", "rate": 10, "per": "second", "burst": 20 }]`
   * (`per`: second, minute or hour; `burst` defaults to `rate`; `*`: the tenants or tools no rule names; the tool
   * `all`: one bucket over all of the tenant's tools together, taken with the tool's own).
   */
  toolRateLimits: jsonList,
  /** Calls per UTC calendar period, `[{ "tenant": "*", "tool": "*", "max": 1000, "period": "day" }]` (hour, day, month). */
  toolQuotas: jsonList,
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The configured rules, checked: INVALID_CONFIG naming the bad rule's field (`toolQuotas[1].period`). */
export function serviceToolLimits(config: {
  readonly toolRateLimits: readonly unknown[];
  readonly toolQuotas: readonly unknown[];
}): {
  toolRateLimits: ToolRateLimit[];
  toolQuotas: ToolQuota[];
} {
  try {
    return {
      toolRateLimits: parseToolRateLimits(config.toolRateLimits),
      toolQuotas: parseToolQuotas(config.toolQuotas),
    };
  } catch (e) {
    const field = e instanceof CodecallError ? e.details?.field : undefined;
    throw new CodecallError('INVALID_CONFIG', `config ${(e as Error).message}`, {
      details: typeof field === 'string' ? { field } : {},
    });
  }
}
