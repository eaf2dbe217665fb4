import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './error-reply.ts';
import { RequestShare } from './request-share.ts';
import type { RequestShareOptions } from './request-share.ts';

export type { RequestShareOptions };

/** Charges a request its cost, once: from when it was admitted to now (the answer is serialised or written). */
const charges = new WeakMap<FastifyRequest, () => void>();

/**
 * For a route that answers on the raw response itself (hijacked, so its answer never passes `onSend`): the request
 * is charged when its response ends (`close`: written, or its client gone), as other requests are at `onSend`. Used
 * by `/mcp` (ADR 0049); event streams are not (they are bounded by their own caps).
 */
export function chargeWhenAnswered(request: FastifyRequest, reply: FastifyReply): void {
  const charge = charges.get(request);
  if (charge !== undefined) reply.raw.once('close', charge);
}

/**
 * Fair share of the event loop between tenants (ADR 0039). After auth, a request of a tenant past its share while
 * another tenant is active is held (its handler not run) until its share allows, or refused `429
 * TOO_MANY_REQUESTS` with `Retry-After` when too many of its requests wait or it would wait too long. Each request
 * is charged what it cost: from admission to its answer being serialised, counting only time the loop was busy
 * (a handler waiting on I/O costs nothing while it waits). Streams (hijacked) are bounded by their own caps; a
 * route that writes its own answer and should be charged says so (`chargeWhenAnswered`, /mcp).
 * Requests without a key (no-auth mode, probes) are not counted.
 */
export function registerRequestShare(
  app: FastifyInstance,
  options: RequestShareOptions,
  onHeld: (seconds: number) => void = () => undefined,
): void {
  const share = new RequestShare(options);
  if (!share.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    const { tenant, keyId } = request.principal;
    // Only API requests made with a key count: probes, scrapes and the console's files are no tenant's (and must not
    // make a lone tenant look contended).
    if (keyId === null) return;
    share.seen(tenant, performance.now());
    // Held in all at most maxWaitMs: the first wait always fits (admit bounds it), a second one may not.
    let waited = 0;
    for (;;) {
      const now = performance.now();
      const admission = share.admit(tenant, now);
      if (admission.kind === 'go') break;
      if (admission.kind === 'refuse' || waited + admission.ms > options.maxWaitMs) {
        const retryAfterS =
          admission.kind === 'refuse' ? admission.retryAfterS : Math.ceil(admission.ms / 1000);
        void reply.header('retry-after', String(retryAfterS));
        return sendError(
          reply,
          429,
          'TOO_MANY_REQUESTS',
          admission.kind === 'refuse' && admission.why === 'held'
            ? `tenant ${tenant} has ${options.maxHeld} requests waiting for their share of the server; retry in ${retryAfterS} s`
            : `tenant ${tenant} is using more than its share of the server; retry in ${retryAfterS} s`,
          { tenant, retry_after_s: retryAfterS },
        );
      }
      share.hold(tenant, 1);
      const since = performance.now();
      const gone = await heldFor(admission.ms, request);
      share.hold(tenant, -1);
      waited += performance.now() - since;
      onHeld((performance.now() - since) / 1000);
      // Answered meanwhile (its key revoked) or its client left: nothing more to do.
      if (gone || reply.sent) return reply;
    }
    const wall0 = performance.now();
    const active0 = performance.eventLoopUtilization().active;
    charges.set(request, () => {
      if (!charges.delete(request)) return;
      const wall = performance.now() - wall0;
      const active = performance.eventLoopUtilization().active - active0;
      share.charge(tenant, Math.min(wall, active), performance.now());
    });
  });
  app.addHook('onSend', (request, _reply, payload, done) => {
    charges.get(request)?.();
    done(null, payload);
  });
}

/** Waits `ms`; true when the client closed its connection meanwhile. */
function heldFor(ms: number, request: FastifyRequest): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = request.raw.socket;
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      socket.off('close', onClose);
      resolve(false);
    }, ms);
    socket.once('close', onClose);
  });
}
