import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP, isIPv4 } from 'node:net';
import { CodecallError } from '../../errors/index.ts';
import { refusedAddressReason } from '../../egress/index.ts';

// The address rules are egress's (one table for every connection the host makes on a caller's behalf).
export { refusedAddressReason };

const MAX_URL_LENGTH = 2048;

export interface WebhookTargetOptions {
  /** Allow private, loopback and other non-public targets (tests, a service inside one network). */
  readonly allowPrivate?: boolean;
}

/** A vetted target: the URL and the addresses to connect to (pinned, so DNS cannot change between check and use). */
export interface WebhookTarget {
  readonly url: URL;
  /** The host without IPv6 brackets. */
  readonly host: string;
  readonly addresses: readonly LookupAddress[];
}

function refused(url: string, reason: string): CodecallError {
  return new CodecallError('WEBHOOK_TARGET_REFUSED', `callback_url refused: ${reason}`, {
    details: { field: 'callback_url', reason, url },
  });
}

function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * The submission-time check, synchronous: http(s), a host, no credentials, and (unless `allowPrivate`) neither a
 * literal non-public address nor `localhost`. Names resolving to private addresses are caught at delivery.
 */
export function checkWebhookUrl(raw: string, options: WebhookTargetOptions = {}): URL {
  if (raw.length > MAX_URL_LENGTH)
    throw refused(raw.slice(0, 64), `longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused(raw, 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused(raw, 'only http and https are allowed');
  if (url.username !== '' || url.password !== '')
    throw refused(raw, 'credentials in the URL are not allowed');
  const host = hostOf(url);
  if (host === '') throw refused(raw, 'no host');
  if (options.allowPrivate) return url;
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) throw refused(raw, 'localhost');
  const reason = refusedAddressReason(host);
  if (reason !== null) throw refused(raw, `${host} is a ${reason} address`);
  return url;
}

export type LookupAll = (host: string) => Promise<readonly LookupAddress[]>;

const systemLookup: LookupAll = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * The delivery-time check: the URL check, then every address the host resolves to (a name may point at a private
 * address, or at several). WEBHOOK_TARGET_REFUSED when any is refused; a DNS failure is thrown as it is (transient).
 */
export async function resolveWebhookTarget(
  raw: string,
  options: WebhookTargetOptions & { readonly signal?: AbortSignal; readonly lookup?: LookupAll } = {},
): Promise<WebhookTarget> {
  const url = checkWebhookUrl(raw, options);
  const host = hostOf(url);
  const family = isIP(host);
  if (family !== 0) return { url, host, addresses: [{ address: host, family }] };
  options.signal?.throwIfAborted();
  const resolving = (options.lookup ?? systemLookup)(host);
  const addresses = options.signal ? await raceAbort(resolving, options.signal) : await resolving;
  if (addresses.length === 0) throw new CodecallError('NOT_FOUND', `${host} resolves to no address`);
  if (!options.allowPrivate) {
    for (const { address } of addresses) {
      const reason = refusedAddressReason(address);
      if (reason !== null) throw refused(raw, `${host} resolves to ${address}, a ${reason} address`);
    }
  }
  return {
    url,
    host,
    addresses: addresses.map((a) => ({ address: a.address, family: isIPv4(a.address) ? 4 : 6 })),
  };
}

// dns.lookup takes no signal; stop waiting for it on abort (the lookup itself finishes in the background).
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
