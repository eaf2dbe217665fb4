import type { FastifyInstance } from 'fastify';
import type { TaskStore } from '../spec/index.ts';
import { listedTenant } from './principal.ts';
import { idSchema } from './task-schemas.ts';
import { visibleTask } from './task-routes.ts';
import type { Runtime } from '../api/index.ts';
import { approverRefusal, assertMayDecide, taskSubmitter } from './approver-policy.ts';
import type { ApproverPolicy } from './approver-policy.ts';

/**
 * The approvals inbox (every pending approval the caller may decide, with the exact arguments) and the decision
 * on several approvals of one task at once: one journaled decision, so the task resumes once with all of them.
 */
export function registerApprovalRoutes(
  app: FastifyInstance,
  runtime: Runtime,
  store: TaskStore,
  policy: ApproverPolicy,
): void {
  app.get<{ Querystring: { tenant?: string } }>(
    '/api/v1/approvals',
    {
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: { tenant: idSchema } },
      },
    },
    async (request) => {
      const tenant = listedTenant(request.principal, request.query.tenant);
      const inbox = await runtime.approvals({ ...(tenant === undefined ? {} : { tenant }) });
      // One audit read per listed task (the inbox is bounded by the tasks waiting), only when separation is on.
      const submitters = new Map<string, string | null>();
      if (policy.separateFromSubmitter) {
        for (const a of inbox.approvals) {
          if (!submitters.has(a.task_id)) submitters.set(a.task_id, await taskSubmitter(store, a.task_id));
        }
      }
      const approvals = inbox.approvals.map((a) => ({
        ...a,
        may_decide: approverRefusal(policy, request.principal, submitters.get(a.task_id) ?? null) === null,
      }));
      return { ...inbox, approvals };
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
      await assertMayDecide(store, policy, request.principal, taskId);
      const { decision, reason, approval_ids: named } = request.body;
      // Without ids: every request pending now (a paused task takes no new ones until it runs again); a task
      // not waiting for approval is refused by decide (ILLEGAL_TRANSITION with its status).
      const ids = named ?? (await runtime.get(taskId))?.pending_approvals.map((a) => a.id) ?? [];
      return runtime.decide(
        taskId,
        ids.map((approvalId) => ({ approvalId, decision, ...(reason === undefined ? {} : { reason }) })),
        { actor: request.principal.actor },
      );
    },
  );
}
