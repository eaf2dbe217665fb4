import type { FastifyInstance } from 'fastify';
import type { TaskStore } from '../spec/index.ts';
import type { Runtime } from '../api/index.ts';
import { parseTraceHeaders } from '../telemetry/index.ts';
import { idempotencyKeyOf, idempotencyOf } from './idempotency-key.ts';
import { idSchema } from './task-schemas.ts';
import { visibleTask } from './task-routes.ts';

/** The body of POST /api/v1/tasks/{id}/revise. */
export interface ReviseBody {
  code: string;
  rerun_reads?: boolean;
}

export const reviseBodySchema = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1, description: "the fixed program, in the task's language" },
    rerun_reads: {
      type: 'boolean',
      description: 'run read/idempotent calls again instead of taking them over (default false)',
    },
  },
} as const;

/**
 * Fix and continue (ADR 0034): a new task runs the fixed program of an ended code task, taking over the calls
 * that task completed. Seen and authorised like any action on the task (another tenant's task is a 404).
 */
export function registerReviseRoute(app: FastifyInstance, runtime: Runtime, store: TaskStore): void {
  app.post<{ Params: { id: string }; Body: ReviseBody }>(
    '/api/v1/tasks/:id/revise',
    {
      schema: {
        params: { type: 'object', properties: { id: idSchema } },
        body: reviseBodySchema,
      },
    },
    async (request, reply) => {
      const taskId = request.params.id;
      const key = idempotencyKeyOf(request);
      await visibleTask(store, request, taskId);
      const { code, rerun_reads: rerunReads } = request.body;
      // The reviser's trace, not the revised task's: the revision is this caller's request (ADR 0053).
      const traceContext = parseTraceHeaders(request.headers.traceparent, request.headers.tracestate);
      // The same key and body on another task (or on POST /tasks) is another request.
      const idempotency = idempotencyOf(request, key, { revise: taskId, body: request.body });
      const view = await runtime.revise(
        taskId,
        {
          code,
          ...(rerunReads === undefined ? {} : { rerunReads }),
          ...(traceContext ? { traceContext } : {}),
        },
        { ...idempotency, actor: request.principal.actor },
      );
      return reply.status(201).send(view);
    },
  );
}
