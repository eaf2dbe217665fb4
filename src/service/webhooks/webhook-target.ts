import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP, isIPv4 } from 'node:net';
import { CodecallError } from '../../errors/index.ts';

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

const v4 = (a: number, b: number, c: number, d: number): number =>
  ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

// [network, prefix length, reason]: every block of the IANA IPv4 special-purpose registry (RFC 6890 and
// successors) plus multicast and the reserved 240/4 (which holds 255.255.255.255): nothing but public unicast.
const V4_REFUSED: readonly (readonly [number, number, string])[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'carrier-grade NAT'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 31, 196, 0), 24, 'reserved'], // AS112-v4
  [v4(192, 52, 193, 0), 24, 'reserved'], // AMT
  [v4(192, 88, 99, 0), 24, 'reserved'], // deprecated 6to4 relay anycast
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(192, 175, 48, 0), 24, 'reserved'], // direct delegation AS112
  [v4(198, 18, 0, 0), 15, 'reserved'], // benchmarking
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function parseV4(ip: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number);
  return v4(a, b, c, d);
}

function v4Reason(n: number): string | null {
  for (const [net, bits, reason] of V4_REFUSED) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === net) return reason;
  }
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded dotted IPv4 tail included). */
function parseV6(ip: string): number[] {
  let text = ip.split('%')[0] ?? ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const n = parseV4(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  if (tail === undefined) return left;
  const right = groups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function v6Reason(ip: string): string | null {
  const g = parseV6(ip);
  const at = (i: number): number => g[i] ?? 0;
  const embeddedV4 = ((at(6) << 16) | at(7)) >>> 0;
  const zeros = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return 'unspecified';
  if (zeros(7) && at(7) === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address they carry.
  if (zeros(5) && at(5) === 0xffff) return v4Reason(embeddedV4);
  // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765 SIIT): a translator hands it to the v4 address as well.
  if (zeros(4) && at(4) === 0xffff && at(5) === 0) return v4Reason(embeddedV4) ?? 'reserved';
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4Reason(embeddedV4);
  // Local-use NAT64 (RFC 8215): the translator is ours, whatever v4 address it carries.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return 'reserved';
  if (zeros(6)) return 'reserved'; // IPv4-compatible, deprecated
  // Discard-only 100::/64 and the dummy prefix 100:0:0:1::/64 (RFC 9780).
  if (at(0) === 0x100 && at(1) === 0 && at(2) === 0 && at(3) <= 1) return 'reserved';
  if (at(0) === 0x2001 && at(1) < 0x200) return 'reserved'; // 2001::/23: Teredo, benchmarking, ORCHID...
  if (at(0) === 0x2001 && at(1) === 0xdb8) return 'documentation';
  if (at(0) === 0x3fff && at(1) < 0x1000) return 'documentation'; // 3fff::/20
  if (at(0) === 0x5f00) return 'reserved'; // SRv6 SIDs 5f00::/16
  if (at(0) === 0x2002) return v4Reason(((at(1) << 16) | at(2)) >>> 0); // 6to4
  if ((at(0) & 0xfe00) === 0xfc00) return 'unique local';
  if ((at(0) & 0xffc0) === 0xfe80) return 'link-local';
  if ((at(0) & 0xffc0) === 0xfec0) return 'site-local';
  if ((at(0) & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/** Why an IP address is not a public unicast address, or null when it is one (and for a non-address). */
export function refusedAddressReason(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare.split('%')[0] ?? bare);
  if (family === 4) return v4Reason(parseV4(bare));
  if (family === 6) return v6Reason(bare);
  return null;
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
