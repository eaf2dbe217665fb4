import type { FastifyInstance } from 'fastify';
import { ANONYMOUS_ADMIN } from './principal.ts';
import type { Authenticate, Principal } from '../spec/index.ts';

/** Paths past the key check: probes and the API description; the metrics scrape checks its own (metrics-access.ts). */
const PUBLIC = new Set(['/healthz', '/readyz', '/metrics', '/api/v1/openapi.json']);

/** Paths outside /api/ that take the API's keys: the MCP endpoint (ADR 0049). */
const GUARDED = new Set(['/mcp']);

/** Every /api/v1 and /mcp request carries a principal; without `authenticate` it is the anonymous admin. */
export function registerAuth(app: FastifyInstance, authenticate: Authenticate | undefined): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request) => {
    // The route that matched, not the raw URL: the router decodes `/%61pi/v1/tasks` to /api/v1/tasks.
    const path = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
    if (authenticate === undefined || PUBLIC.has(path) || !(path.startsWith('/api/') || GUARDED.has(path))) {
      request.principal = ANONYMOUS_ADMIN;
      return;
    }
    request.principal = await authenticate(request.headers.authorization);
  });
}
