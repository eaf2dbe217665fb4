import { isIP } from 'node:net';

// Which addresses the host never connects to on a caller's behalf (webhooks, a task's egress): anything but public
// unicast, so a caller cannot reach the host's own network, its loopback services or a cloud metadata endpoint.

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

/** `localhost` and its subdomains (RFC 6761): resolvers answer them with loopback, whatever DNS says. */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
