import type { FastifyInstance } from 'fastify';

/** GET /api/v1/me: who the key is, for the console's header (and a cheap check that a pasted key works). */
export function registerMeRoute(app: FastifyInstance): void {
  app.get('/api/v1/me', (request) => {
    const p = request.principal;
    return { tenant: p.tenant, role: p.role, key_id: p.keyId, actor: p.actor };
  });
}
