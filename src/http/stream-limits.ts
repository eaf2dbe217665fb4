import { CodecallError } from '../errors/index.ts';
import type { Principal } from '../spec/index.ts';

/** How many streams one key and one tenant may hold open at once in this process. */
export interface StreamLimitOptions {
  readonly maxPerKey: number;
  readonly maxPerTenant: number;
}

/** Seconds a refused client is told to wait: a stream is freed when one closes, which is soon or never. */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * Counts open streams per key and per tenant; `acquire` refuses one over either cap with TOO_MANY_STREAMS (429)
 * and returns the release, which frees the slot once (a stream may end by several ways at once).
 */
export function streamLimiter(options: StreamLimitOptions): (principal: Principal) => () => void {
  const byKey = new Map<string, number>();
  const byTenant = new Map<string, number>();
  const bump = (map: Map<string, number>, id: string, by: number): void => {
    const n = (map.get(id) ?? 0) + by;
    if (n <= 0) map.delete(id);
    else map.set(id, n);
  };
  return (principal) => {
    const key = principal.keyId ?? `anonymous:${principal.actor}`;
    const refuse = (scope: 'key' | 'tenant', limit: number): never => {
      throw new CodecallError('TOO_MANY_STREAMS', `this ${scope} has ${limit} streams open already`, {
        details: { scope, limit, retry_after_s: STREAM_RETRY_AFTER_S },
      });
    };
    if ((byKey.get(key) ?? 0) >= options.maxPerKey) refuse('key', options.maxPerKey);
    if ((byTenant.get(principal.tenant) ?? 0) >= options.maxPerTenant) refuse('tenant', options.maxPerTenant);
    bump(byKey, key, 1);
    bump(byTenant, principal.tenant, 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      bump(byKey, key, -1);
      bump(byTenant, principal.tenant, -1);
    };
  };
}
