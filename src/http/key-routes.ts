import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { newApiKey } from '../auth/api-keys.ts';
import { keyView } from '../api/index.ts';
import type { ServiceStore } from '../spec/index.ts';
import { idSchema } from './task-schemas.ts';
import type { KeyRevocations } from './key-revocations.ts';

const tenant = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' } as const;

function assertAdmin(request: FastifyRequest): void {
  if (request.principal.role !== 'admin') {
    throw new CodecallError('FORBIDDEN', 'only an admin key manages API keys', { details: {} });
  }
}

/** API keys over HTTP, for admin keys: create (the key is in this one answer), list (never secrets), revoke
 * (the key's streams and requests in flight end at once). */
export function registerKeyRoutes(
  app: FastifyInstance,
  store: ServiceStore,
  revocations?: KeyRevocations,
): void {
  app.post<{ Body: { tenant: string; role?: 'admin' | 'member' | 'approver'; name?: string } }>(
    '/api/v1/keys',
    {
      schema: {
        body: {
          type: 'object',
          required: ['tenant'],
          additionalProperties: false,
          properties: {
            tenant,
            role: { type: 'string', enum: ['admin', 'member', 'approver'] },
            name: { type: 'string', minLength: 1, maxLength: 200 },
          },
        },
      },
    },
    async (request, reply) => {
      assertAdmin(request);
      const key = newApiKey();
      const b = request.body;
      const record = await store.createApiKey({
        ...key,
        tenant: b.tenant,
        role: b.role ?? 'member',
        name: b.name ?? null,
      });
      return reply.status(201).send({ ...keyView(record), key: key.key });
    },
  );

  app.get('/api/v1/keys', async (request) => {
    assertAdmin(request);
    return { keys: (await store.listApiKeys()).map(keyView) };
  });

  app.delete<{ Params: { id: string } }>(
    '/api/v1/keys/:id',
    { schema: { params: { type: 'object', properties: { id: idSchema } } } },
    async (request) => {
      assertAdmin(request);
      if (request.params.id === request.principal.keyId) {
        throw new CodecallError('ILLEGAL_TRANSITION', 'a key cannot revoke itself; use another admin key', {
          details: { key_id: request.params.id },
        });
      }
      const record = await store.revokeApiKey(request.params.id);
      // Its open streams and requests in flight here end now (other servers see it within their tick).
      revocations?.revoked(record.id);
      return keyView(record);
    },
  );
}
