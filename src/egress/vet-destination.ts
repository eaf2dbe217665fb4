import { isIP } from 'node:net';
import type { NetworkAccess } from '../spec/index.ts';
import { isLocalhostName } from './address-rules.ts';
import { matchAllowEntry } from '../spec/index.ts';
import type { AllowEntry } from '../spec/index.ts';
import { abortReason, failed, refused } from './egress-errors.ts';
import { DEFAULT_METHODS, NEVER_METHODS } from '../spec/index.ts';

/** Which destinations are out of bounds whatever the allow list says (EgressSettings gives it). */
export interface AddressPolicy {
  readonly allowPrivate: boolean;
  readonly refusedAddress: (address: string) => string | null;
}

export type Lookup = (host: string) => Promise<readonly { address: string; family: number }[]>;

/** One hop's destination, vetted before anything is resolved or sent. */
export interface Destination {
  readonly url: URL;
  /** The URL's hostname without a trailing dot (IPv6 in brackets): what allow entries and secrets match. */
  readonly host: string;
  /** What to resolve and connect to, and the name TLS checks (IPv6 without brackets). */
  readonly connectHost: string;
  readonly port: number;
  readonly defaultPort: number;
  readonly allowedBy: string;
}

/**
 * The checks that need no network, in order: scheme, credentials, method, allow list, and (unless private
 * destinations are allowed) `localhost` and literal non-public addresses.
 */
export function vetDestination(
  url: URL,
  method: string,
  access: NetworkAccess,
  entries: readonly AllowEntry[],
  policy: AddressPolicy,
): Destination {
  const https = url.protocol === 'https:';
  if (!https && !(url.protocol === 'http:' && access.allowHttp === true)) {
    const also = url.protocol === 'http:' ? ' (the task does not allow_http)' : '';
    throw refused('scheme', `${url.protocol} is not allowed: https only${also}`, { scheme: url.protocol });
  }
  if (url.username !== '' || url.password !== '')
    throw refused(
      'credentials',
      'a user or password in the URL is not allowed (send an Authorization header)',
    );
  const methods = access.methods ?? DEFAULT_METHODS;
  if (!methods.includes(method) || NEVER_METHODS.includes(method))
    throw refused('method', `${method} is not allowed (allowed: ${methods.join(', ')})`, { method });
  const host = url.hostname.replace(/\.$/, '');
  const defaultPort = https ? 443 : 80;
  const port = url.port === '' ? defaultPort : Number(url.port);
  const entry = matchAllowEntry(entries, host, port, defaultPort);
  if (entry === null)
    throw refused('not_allowed', `${host}:${port} is not in the task's network allow list`, { host, port });
  const connectHost = host.startsWith('[') ? host.slice(1, -1) : host;
  if (!policy.allowPrivate && isLocalhostName(connectHost))
    throw refused('address', `${host} is a loopback name`, { host });
  const reason = isIP(connectHost) === 0 ? null : policy.refusedAddress(connectHost);
  if (reason !== null)
    throw refused('address', `${host} is a ${reason} address`, { host, address: connectHost });
  return { url, host, connectHost, port, defaultPort, allowedBy: entry.text };
}

export interface Address {
  readonly address: string;
  readonly family: number;
}

/**
 * The addresses to connect to, resolved once for this hop and each checked: a public name may point at a
 * private address (DNS rebinding, a metadata endpoint), and one refused address refuses the name.
 */
export async function resolveDestination(
  to: Destination,
  lookup: Lookup,
  policy: AddressPolicy,
  signal: AbortSignal,
): Promise<readonly Address[]> {
  const literal = isIP(to.connectHost);
  if (literal !== 0) return [{ address: to.connectHost, family: literal }];
  let resolved: readonly { address: string; family: number }[];
  try {
    resolved = await untilAborted(lookup(to.connectHost), signal);
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    throw failed(to.host, error);
  }
  const addresses = resolved
    .map(({ address }) => ({ address, family: isIP(address) }))
    .filter((a) => a.family !== 0);
  if (addresses.length === 0)
    throw failed(
      to.host,
      Object.assign(new Error(`${to.host} resolves to no address`), { code: 'ENOTFOUND' }),
    );
  for (const { address } of addresses) {
    const reason = policy.refusedAddress(address);
    if (reason !== null)
      throw refused('address', `${to.host} resolves to ${address}, a ${reason} address`, {
        host: to.host,
        address,
      });
  }
  return addresses;
}

// A lookup takes no signal: stop waiting for it on abort (it finishes in the background).
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
