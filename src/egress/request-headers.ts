import { validateHeaderName, validateHeaderValue } from 'node:http';
import { invalid, overLimit, refused } from './egress-errors.ts';
import { hasPlaceholder, injectSecrets } from './secrets.ts';
import type { HostPort, Secrets } from './secrets.ts';

export type Header = readonly [string, string];

/**
 * Headers the host writes itself: `host` is the vetted destination (a program's own would reach another site
 * behind the same address), the framing ones describe the body the host sends, and the hop-by-hop ones are the
 * connection's, which the host owns.
 */
const HOST_SET = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);

/** Dropped when a redirect leaves the origin, as fetch drops them: credentials meant for the first site. */
const CROSS_ORIGIN_DROPPED = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Describe a body that a redirect to GET no longer has. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);

const USER_AGENT = 'codecall-egress/1';

/** The program's headers, checked: well formed, none the host writes. */
export function checkHeaders(headers: unknown): Header[] {
  if (!Array.isArray(headers)) throw invalid('headers', 'must be a list of [name, value] pairs');
  return headers.map((pair: unknown, i): Header => {
    if (
      !Array.isArray(pair) ||
      pair.length !== 2 ||
      typeof pair[0] !== 'string' ||
      typeof pair[1] !== 'string'
    )
      throw invalid(`headers[${i}]`, 'must be a [name, value] pair of strings');
    const [name, value] = pair as [string, string];
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      throw invalid(`headers[${i}]`, `"${name.slice(0, 64)}" is not a valid header name or value`);
    }
    if (HOST_SET.has(name.toLowerCase()))
      throw refused('header', `the header "${name}" is set by the host`, { header: name });
    return [name, value];
  });
}

/** What a cross-origin redirect keeps: no credentials, no header a secret was injected into. */
export function crossOriginHeaders(headers: readonly Header[]): Header[] {
  return headers.filter(
    ([name, value]) => !CROSS_ORIGIN_DROPPED.has(name.toLowerCase()) && !hasPlaceholder(value),
  );
}

/** What a redirect that turns the request into a GET keeps: nothing about the body it drops. */
export function withoutBodyHeaders(headers: readonly Header[]): Header[] {
  return headers.filter(([name]) => !BODY_HEADERS.has(name.toLowerCase()));
}

/**
 * One hop's headers as they go out (node's flat raw form): `host` first, the program's in order with secrets
 * injected for this destination, then the defaults it did not set. EGRESS_LIMIT over `maxBytes` in all.
 */
export function outgoingHeaders(options: {
  readonly hostHeader: string;
  readonly headers: readonly Header[];
  readonly bodyLength: number | null;
  readonly method: string;
  readonly secrets: Secrets;
  readonly to: HostPort;
  readonly sent: Map<string, string>;
  readonly maxBytes: number;
}): string[] {
  const { headers, secrets, to, sent } = options;
  const out: string[] = ['host', options.hostHeader];
  const named = new Set<string>();
  for (const [name, value] of headers) {
    out.push(name, injectSecrets(name, value, secrets, to, sent));
    named.add(name.toLowerCase());
  }
  // Bytes go back as received: asking for no compression keeps max_bytes the size the program gets.
  if (!named.has('accept-encoding')) out.push('accept-encoding', 'identity');
  if (!named.has('user-agent')) out.push('user-agent', USER_AGENT);
  if (options.bodyLength !== null) out.push('content-length', String(options.bodyLength));
  else if (!['GET', 'HEAD', 'OPTIONS', 'DELETE', 'TRACE'].includes(options.method))
    out.push('content-length', '0');
  let bytes = 0;
  for (let i = 0; i < out.length; i += 2) bytes += (out[i]?.length ?? 0) + (out[i + 1]?.length ?? 0) + 4;
  if (bytes > options.maxBytes)
    throw overLimit(
      'header_bytes',
      options.maxBytes,
      `the request's headers are over ${options.maxBytes} bytes`,
    );
  return out;
}
