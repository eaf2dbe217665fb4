import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

/**
 * A `lookup` for node:http(s) that answers with addresses already vetted: the name is not resolved again, so DNS
 * cannot change between the check and the connection (no rebinding). Egress and webhooks both connect this way.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void): void => {
    const first = addresses[0];
    if (options.all) callback(null, addresses);
    else if (first) callback(null, first.address, first.family);
    else callback(new Error('no address'));
  }) as LookupFunction;
}
