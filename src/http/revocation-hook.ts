import type { ServerResponse } from 'node:http';
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
      // An answer already under way (a long download to a slow reader) is cut off: the rest is not sent. A
      // stream (hijacked) says why first (sse-stream.ts): its socket goes only if that is not flushed soon.
      if (reply.raw.headersSent) {
        if (!reply.raw.writableFinished) cutOff(reply.raw);
        return;
      }
      if (reply.sent) return;
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

/** How long an answer under way for a revoked key may take to finish before its socket is destroyed. */
const CUT_OFF_MS = 250;

function cutOff(res: ServerResponse): void {
  const timer = setTimeout(() => res.destroy(), CUT_OFF_MS);
  timer.unref();
  res.once('finish', () => clearTimeout(timer));
  res.once('close', () => clearTimeout(timer));
}
