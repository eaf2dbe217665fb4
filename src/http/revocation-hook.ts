import type { FastifyInstance } from 'fastify';
import { sendError } from './error-reply.ts';
import { keyRevokedError } from './key-revocations.ts';
import type { KeyRevocations } from './key-revocations.ts';

/**
 * Requests in flight when their key is revoked are refused: answered 401 KEY_REVOKED at once (a body still
 * coming in is not waited for; the connection closes after the answer), and one that gets past its body later
 * never reaches its handler. Streams (hijacked) end on their own (sse-stream.ts).
 */
export function registerRevocationHook(app: FastifyInstance, revocations: KeyRevocations): void {
  app.addHook('onRequest', async (request, reply) => {
    const { keyId } = request.principal;
    if (keyId === null) return;
    if (revocations.isRevoked(keyId)) throw keyRevokedError(keyId);
    const unuse = revocations.use(keyId, () => {
      if (reply.sent || reply.raw.headersSent) return;
      const e = keyRevokedError(keyId);
      void reply.header('connection', 'close');
      sendError(reply, 401, e.code, e.message, e.details);
    });
    reply.raw.once('close', unuse);
    reply.raw.once('finish', unuse);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const { keyId } = request.principal;
    done(keyId !== null && revocations.isRevoked(keyId) ? keyRevokedError(keyId) : undefined);
  });
}
