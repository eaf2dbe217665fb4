import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendError } from './error-reply.ts';

/** What the guard checks (ADR 0022); `originGuardFor` derives it from the service's config. */
export interface OriginGuardOptions {
  /**
   * The `Host` names a request may carry (`name`, `name:port`, `[v6]`, `*`); null: no Host check. With
   * `allowIpHosts`, any IP literal passes too.
   */
  readonly allowedHosts: readonly string[] | null;
  /** IP literals pass the Host check: a rebinding attack needs a name it controls, never an IP. */
  readonly allowIpHosts?: boolean;
  /** Refuse requests a browser sent from another site (no-auth mode: any page could act as admin). */
  readonly checkOrigin: boolean;
}

/** The names a no-auth server answers to by default, on any port. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The guard `codecall serve` runs with: on by default in no-auth mode; with keys, only for set allowedHosts. */
export function originGuardFor(config: {
  readonly insecureNoAuth: boolean;
  readonly host: string;
  readonly allowedHosts: readonly string[] | null;
}): OriginGuardOptions {
  if (config.allowedHosts !== null) {
    return { allowedHosts: config.allowedHosts, checkOrigin: config.insecureNoAuth };
  }
  if (!config.insecureNoAuth) return { allowedHosts: null, checkOrigin: false };
  const own = ownHost(config.host);
  return {
    allowedHosts: own === null ? LOOPBACK_HOSTS : [...LOOPBACK_HOSTS, own],
    allowIpHosts: true,
    checkOrigin: true,
  };
}

/** The configured listen host as a Host entry; null for the wildcards (0.0.0.0, ::), which no client names. */
function ownHost(host: string): string | null {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === '0.0.0.0' || h === '::' || h === '') return null;
  return isIP(h) === 6 ? `[${h}]` : h;
}

/** `Host: name:port` split; null when it is not a host at all. */
function splitHost(value: string): { name: string; port: string | null } | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::([0-9]{1,5}))?$/.exec(value.toLowerCase());
  if (m === null) return null;
  return { name: m[1] ?? '', port: m[2] ?? null };
}

function hostAllowed(options: OriginGuardOptions, value: string | undefined): boolean {
  const allowed = options.allowedHosts;
  if (allowed === null) return true;
  if (value === undefined) return false;
  const host = splitHost(value);
  if (host === null) return false;
  if (options.allowIpHosts && isIP(host.name.replace(/^\[(.*)\]$/, '$1')) !== 0) return true;
  return allowed.some((entry) => {
    if (entry === '*') return true;
    const want = splitHost(entry);
    return want !== null && want.name === host.name && (want.port === null || want.port === host.port);
  });
}

/** Why a browser's request from another origin is refused; null when it may pass. */
function crossOrigin(request: FastifyRequest): string | null {
  const site = request.headers['sec-fetch-site'];
  // `same-site` is another origin too (another port of localhost is the same site): only our own page passes,
  // or the user's own navigation (`none`); any other value (`cross-site`, a repeated header) is refused.
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `Sec-Fetch-Site is ${site.slice(0, 40)}`;
  }
  const origin = request.headers.origin;
  if (origin === undefined) return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Origin ${origin.slice(0, 100)} is not ours`;
  }
  const ours = (url.protocol === 'http:' || url.protocol === 'https:') && sameHost(url, request.headers.host);
  return ours ? null : `Origin ${origin.slice(0, 100)} is not ours`;
}

/** The Origin's host and port against the Host header, both normalised as URLs (a default port dropped). */
function sameHost(origin: URL, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(`${origin.protocol}//${host}`).host === origin.host;
  } catch {
    return false;
  }
}

/**
 * One onRequest hook, before auth and routing: a `Host` not allowed is 421 HOST_NOT_ALLOWED (DNS rebinding), and
 * in no-auth mode a request from another origin is 403 CROSS_ORIGIN_REFUSED when it changes state or reads the
 * API. A request with neither Origin nor Sec-Fetch-Site (the CLI, curl, our client) is not a browser's: it passes.
 */
export function registerOriginGuard(app: FastifyInstance, options: OriginGuardOptions): void {
  if (options.allowedHosts === null && !options.checkOrigin) return;
  app.addHook('onRequest', async (request, reply) => {
    const host = request.headers.host;
    if (!hostAllowed(options, host)) {
      return sendError(
        reply,
        421,
        'HOST_NOT_ALLOWED',
        `this server does not answer to Host ${JSON.stringify(host?.slice(0, 100) ?? '')}; add it with --allowed-host`,
        { host: host?.slice(0, 255) ?? null },
      );
    }
    if (!options.checkOrigin) return;
    // The route that matched, else the raw URL: the router decodes `/%61pi/v1/tasks` to /api/v1/tasks.
    const path = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
    if (!UNSAFE.has(request.method) && !path.startsWith('/api/')) return;
    const why = crossOrigin(request);
    if (why !== null) {
      return sendError(
        reply,
        403,
        'CROSS_ORIGIN_REFUSED',
        `${why}: a server without API keys takes no requests from other sites' pages`,
      );
    }
  });
}
