import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { parseTraceHeaders } from '../telemetry/index.ts';
import { canSee } from './principal.ts';
import { toSubmitInput } from './submit-body.ts';
import { batchBodySchema, idSchema } from './task-schemas.ts';
import type { BatchBody } from './task-schemas.ts';
import type { CallbackCheck, Runtime } from '../api/index.ts';

/** Batches: up to 1,000 tasks accepted in one transaction (all or none), then each runs on its own. */
export function registerBatchRoutes(
  app: FastifyInstance,
  runtime: Runtime,
  checkCallback: CallbackCheck,
): void {
  app.post<{ Body: BatchBody }>(
    '/api/v1/tasks/batch',
    { schema: { body: batchBodySchema } },
    async (request, reply) => {
      const { tenant, actor } = request.principal;
      // The caller's trace: every task of the batch keeps it, each run a child of the caller's span (ADR 0053).
      const traceContext = parseTraceHeaders(request.headers.traceparent, request.headers.tracestate);
      const inputs = request.body.tasks.map((task, i) => {
        const input = toSubmitInput(task, { tenant, checkCallback, field: `tasks[${i}]` });
        return traceContext ? { ...input, traceContext } : input;
      });
      const callback = request.body.callback_url;
      if (callback !== undefined) checkCallback(callback, 'callback_url');
      const batch = await runtime.submitBatch(inputs, {
        tenant,
        actor,
        ...(callback === undefined ? {} : { callbackUrl: callback }),
      });
      return reply
        .status(201)
        .send({ batch_id: batch.batch_id, task_ids: batch.task_ids, created_at: batch.created_at });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/batches/:id',
    { schema: { params: { type: 'object', properties: { id: idSchema } } } },
    async (request) => {
      const batch = await runtime.getBatch(request.params.id);
      if (!batch || !canSee(request.principal, batch.tenant)) {
        throw new CodecallError('NOT_FOUND', `no batch ${request.params.id}`, {
          details: { batch_id: request.params.id },
        });
      }
      return batch;
    },
  );
}
