import type { FastifyInstance } from 'fastify';
import { toJsonView } from '../codec/index.ts';
import { pendingApprovals } from '../durable/index.ts';
import type { Runtime } from '../durable/index.ts';
import type { TaskRecord, TaskStore } from '../spec/index.ts';
import { listedTenant } from './principal.ts';
import { idSchema } from './task-schemas.ts';
import { visibleTask } from './task-routes.ts';

/** Paused tasks read per store page while collecting the inbox. */
const PAGE = 1000;

export interface InboxItem {
  readonly task_id: string;
  readonly approval_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly requested_at: string;
  readonly tenant: string;
  readonly session_id: string | null;
}

/** Every task of the tenant (an admin: of every tenant, or the one named) that waits for approval. */
async function waitingTasks(store: TaskStore, tenant: string | undefined): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  for (let cursor: string | undefined; ;) {
    const page = await store.listTasks({
      status: 'paused',
      limit: PAGE,
      ...(tenant === undefined ? {} : { tenant }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    out.push(...page.tasks.filter((t) => t.pauseReason === 'approval_required'));
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}

/**
 * The approvals inbox (every pending approval the caller may decide, with the exact arguments) and the decision
 * on several approvals of one task at once: one journaled decision, so the task resumes once with all of them.
 */
export function registerApprovalRoutes(app: FastifyInstance, runtime: Runtime, store: TaskStore): void {
  app.get<{ Querystring: { tenant?: string } }>(
    '/api/v1/approvals',
    {
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: { tenant: idSchema } },
      },
    },
    async (request) => {
      const tenant = listedTenant(request.principal, request.query.tenant);
      const approvals: InboxItem[] = [];
      for (const task of await waitingTasks(store, tenant)) {
        for (const a of pendingApprovals(await store.readJournal(task.id))) {
          approvals.push({
            task_id: task.id,
            approval_id: a.id,
            tool: a.tool,
            arguments: toJsonView(a.arguments),
            requested_at: a.requestedAt,
            tenant: task.tenant,
            session_id: task.sessionId,
          });
        }
      }
      return { approvals };
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
        { actor: request.principal.actor },
      );
    },
  );
}
