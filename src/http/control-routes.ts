import type { FastifyInstance } from 'fastify';
import type { TaskStore } from '../spec/index.ts';
import { idSchema } from './task-schemas.ts';
import { visibleTask } from './task-routes.ts';
import type { Runtime } from '../api/index.ts';

const params = { type: 'object', properties: { id: idSchema } } as const;
const reason = { type: 'string', maxLength: 2000 } as const;

/**
 * Steering a task: pause, resume, cancel, approval decisions, input and the resolution of a call left in doubt
 * by a crash (`needs_attention`), each journaled with the caller.
 */
export function registerControlRoutes(app: FastifyInstance, runtime: Runtime, store: TaskStore): void {
  app.post<{ Params: { id: string }; Body: { action: 'pause' | 'resume' | 'cancel'; reason?: string } }>(
    '/api/v1/tasks/:id/control',
    {
      schema: {
        params,
        body: {
          type: 'object',
          required: ['action'],
          additionalProperties: false,
          properties: { action: { type: 'string', enum: ['pause', 'resume', 'cancel'] }, reason },
        },
      },
    },
    async (request) => {
      const { id: taskId } = request.params;
      await visibleTask(store, request, taskId);
      const { action, reason: why } = request.body;
      const who = { actor: request.principal.actor, ...(why === undefined ? {} : { reason: why }) };
      if (action === 'pause') return runtime.pause(taskId, who);
      if (action === 'cancel') return runtime.cancel(taskId, who);
      return runtime.resume(taskId, who);
    },
  );

  app.post<{
    Params: { id: string; approval_id: string };
    Body: { decision: 'approve' | 'reject'; reason?: string };
  }>(
    '/api/v1/tasks/:id/approvals/:approval_id',
    {
      schema: {
        params: { type: 'object', properties: { id: idSchema, approval_id: idSchema } },
        body: {
          type: 'object',
          required: ['decision'],
          additionalProperties: false,
          properties: { decision: { type: 'string', enum: ['approve', 'reject'] }, reason },
        },
      },
    },
    async (request) => {
      await visibleTask(store, request, request.params.id);
      const { decision, reason: why } = request.body;
      return runtime.decide(
        request.params.id,
        [{ approvalId: request.params.approval_id, decision, ...(why === undefined ? {} : { reason: why }) }],
        { actor: request.principal.actor, role: request.principal.role },
      );
    },
  );

  app.post<{
    Params: { id: string };
    Body: { action: 'retry' | 'skip' | 'fail'; call_id?: string; result?: unknown; reason?: string };
  }>(
    '/api/v1/tasks/:id/attention',
    {
      schema: {
        params,
        body: {
          type: 'object',
          required: ['action'],
          additionalProperties: false,
          properties: {
            action: { type: 'string', enum: ['retry', 'skip', 'fail'] },
            call_id: {
              type: 'string',
              minLength: 1,
              maxLength: 200,
              description:
                'decide this call in doubt only (default: retry covers every call the task waits on, skip the first)',
            },
            result: {},
            reason,
          },
        },
      },
    },
    async (request) => {
      await visibleTask(store, request, request.params.id);
      const { action, call_id: callId, result, reason: why } = request.body;
      return runtime.resolveAttention(
        request.params.id,
        { action, ...(callId === undefined ? {} : { callId }), ...(result === undefined ? {} : { result }) },
        { actor: request.principal.actor, ...(why === undefined ? {} : { reason: why }) },
      );
    },
  );

  app.post<{ Params: { id: string }; Body: { name: string; value: unknown } }>(
    '/api/v1/tasks/:id/input',
    {
      schema: {
        params,
        body: {
          type: 'object',
          required: ['name', 'value'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, value: {} },
        },
      },
    },
    async (request) => {
      await visibleTask(store, request, request.params.id);
      return runtime.provideInput(request.params.id, request.body.name, request.body.value, {
        actor: request.principal.actor,
      });
    },
  );
}
