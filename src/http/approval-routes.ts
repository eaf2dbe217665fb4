import type { FastifyInstance } from 'fastify';
import type { TaskStore } from '../spec/index.ts';
import { listedTenant } from './principal.ts';
import { idSchema, pageQuery } from './task-schemas.ts';
import { visibleTask } from './task-routes.ts';
import type { Runtime } from '../api/index.ts';

/**
 * The approvals inbox (every pending approval the caller may decide, with the exact arguments) and the decision
 * on several approvals of one task at once: one journaled decision, so the task resumes once with all of them.
 */
export function registerApprovalRoutes(app: FastifyInstance, runtime: Runtime, store: TaskStore): void {
  app.get<{ Querystring: { tenant?: string; limit?: string; cursor?: string } }>(
    '/api/v1/approvals',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { tenant: idSchema, ...pageQuery },
        },
      },
    },
    async (request) => {
      const q = request.query;
      const tenant = listedTenant(request.principal, q.tenant);
      const { actor, role } = request.principal;
      // `may_decide` is the runtime's own check, the one `decide` makes (ADR 0031). A page: the approvals of up
      // to `limit` waiting tasks (default 100), so the inbox costs what it shows.
      return runtime.approvals({
        ...(tenant === undefined ? {} : { tenant }),
        ...(q.limit === undefined ? {} : { limit: Number(q.limit) }),
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        decider: { actor, role },
      });
    },
  );

  app.post<{
    Params: { id: string };
    Body: { decision: 'approve' | 'reject'; reason?: string; approval_ids?: string[] };
  }>(
    '/api/v1/tasks/:id/approvals',
    {
      schema: {
        params: { type: 'object', properties: { id: idSchema } },
        body: {
          type: 'object',
          required: ['decision'],
          additionalProperties: false,
          properties: {
            decision: { type: 'string', enum: ['approve', 'reject'] },
            reason: { type: 'string', maxLength: 2000 },
            approval_ids: { type: 'array', minItems: 1, maxItems: 1000, items: idSchema },
          },
        },
      },
    },
    async (request) => {
      const taskId = request.params.id;
      await visibleTask(store, request, taskId);
      const { decision, reason, approval_ids: named } = request.body;
      // Without ids: every request pending now (a paused task takes no new ones until it runs again); a task
      // not waiting for approval is refused by decide (ILLEGAL_TRANSITION with its status).
      const ids = named ?? (await runtime.get(taskId))?.pending_approvals.map((a) => a.id) ?? [];
      return runtime.decide(
        taskId,
        ids.map((approvalId) => ({ approvalId, decision, ...(reason === undefined ? {} : { reason }) })),
        // Who may decide is the runtime's check (APPROVER_NOT_ALLOWED, APPROVAL_EXPIRED), as on every path.
        { actor: request.principal.actor, role: request.principal.role },
      );
    },
  );
}
