import { isIP } from 'node:net';

/**
 * One `allow` entry (or a secret's host binding), compiled: `api.example.com`, `*.github.com`, `host:8443`,
 * `10.0.0.5`, `[2001:db8::1]:8443`.
 */
export interface AllowEntry {
  /** The entry in its normal form (lower case, IPv6 compressed): what `allowedBy` reports. */
  readonly text: string;
  /** A host as URL parsing writes it (IPv6 in brackets); for a wildcard, the suffix after `*.`. */
  readonly host: string;
  readonly wildcard: boolean;
  /** Null: the scheme's default port only (443, or 80 for http). */
  readonly port: number | null;
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** The host as URL parsing normalizes it, or null when it does not parse. */
function urlHost(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
}

function parsePort(text: string): number | string {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
  return port >= 1 && port <= 65535 ? port : `"${text}" is not a port (1-65535)`;
}

/**
 * A name must be written as URL parsing would write it, so what the task allowed is what a request's host is
 * compared with: `0x7f.1` or `1.2.3` would silently become IPv4 addresses, and are refused instead.
 */
function checkName(name: string): string | null {
  if (name.length > 253 || !name.split('.').every((label) => LABEL.test(label)))
    return `"${name}" is not a host name (letters, digits, - and _ in dot-separated labels; no trailing dot)`;
  if (urlHost(name) !== name)
    return `"${name}" is not written as a host name or IPv4 address in its usual form`;
  return null;
}

/** The entry compiled, or a sentence saying why it is not one. */
export function parseAllowEntry(raw: string): AllowEntry | string {
  const text = raw.toLowerCase();
  if (text === '') return 'an entry is empty';
  if (/[/@?#\\\s]/.test(text) || text.includes('://'))
    return `"${raw}" is not a host: give a name or address with an optional :port, no scheme, path or user`;
  let hostPart = text;
  let port: number | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const rest = close < 0 ? '' : text.slice(close + 1);
    if (close < 0 || (rest !== '' && !rest.startsWith(':'))) return `"${raw}" is not an [IPv6]:port`;
    hostPart = text.slice(0, close + 1);
    if (rest !== '') {
      const parsed = parsePort(rest.slice(1));
      if (typeof parsed === 'string') return parsed;
      port = parsed;
    }
  } else if (isIP(text) === 6) {
    hostPart = `[${text}]`;
  } else if (text.includes(':')) {
    const colon = text.lastIndexOf(':');
    hostPart = text.slice(0, colon);
    const parsed = parsePort(text.slice(colon + 1));
    if (typeof parsed === 'string') return parsed;
    port = parsed;
  }
  const suffix = port === null ? '' : `:${port}`;
  if (hostPart.startsWith('[')) {
    const host = isIP(hostPart.slice(1, -1)) === 6 ? urlHost(hostPart) : null;
    if (host === null) return `"${raw}" is not an IPv6 address`;
    return { text: `${host}${suffix}`, host, wildcard: false, port };
  }
  const wildcard = hostPart.startsWith('*.');
  const name = wildcard ? hostPart.slice(2) : hostPart;
  if (name.includes('*')) return `"${raw}": a wildcard is only a leading "*." (as in *.example.com)`;
  if (wildcard && isIP(name) !== 0) return `"${raw}": a wildcard covers names, not addresses`;
  const problem = checkName(name);
  if (problem !== null) return problem;
  return { text: `${wildcard ? '*.' : ''}${name}${suffix}`, host: name, wildcard, port };
}

/**
 * The entry that lets `host:port` through, or null. `host` is a URL's hostname (lower case, IPv6 in brackets)
 * without a trailing dot; `defaultPort` is its scheme's. `*.x.com` covers `a.x.com` and `a.b.x.com`, not `x.com`.
 */
export function matchAllowEntry(
  entries: readonly AllowEntry[],
  host: string,
  port: number,
  defaultPort: number,
): AllowEntry | null {
  for (const entry of entries) {
    if ((entry.port ?? defaultPort) !== port) continue;
    if (entry.wildcard ? host.endsWith(`.${entry.host}`) : host === entry.host) return entry;
  }
  return null;
}
