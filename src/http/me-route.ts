import type { FastifyInstance } from 'fastify';
import { ANONYMOUS_ADMIN } from './principal.ts';

/** GET /api/v1/me: who the key is, for the console's header (and a cheap check that a pasted key works). */
export function registerMeRoute(app: FastifyInstance): void {
  app.get('/api/v1/me', (request) => {
    const p = request.principal;
    // `none`: the server checks no keys (--insecure-no-auth), so the console says every visitor is admin.
    const auth = p === ANONYMOUS_ADMIN ? 'none' : 'key';
    return { tenant: p.tenant, role: p.role, key_id: p.keyId, actor: p.actor, auth };
  });
}
