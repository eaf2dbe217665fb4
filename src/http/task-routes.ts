import type { FastifyInstance } from 'fastify';
import { canonicalJson, sha256Hex } from '../codec/index.ts';
import type { Runtime } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { TASK_TRANSITIONS } from '../spec/index.ts';
import type { GuestLanguage, TaskStatus, TaskStore } from '../spec/index.ts';

const STATUSES = Object.keys(TASK_TRANSITIONS);
const id = { type: 'string', minLength: 1, maxLength: 128 } as const;

const createBody = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1 },
    language: { type: 'string', enum: ['javascript', 'typescript', 'python'] },
    seed: { type: 'integer' },
    tools: { type: 'array', items: { type: 'string' } },
    metadata: { type: 'object' },
    tool_constraints: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeout_seconds: { type: 'number', exclusiveMinimum: 0 },
        max_memory_mb: { type: 'number', exclusiveMinimum: 0 },
      },
    },
  },
} as const;

interface CreateBody {
  code: string;
  language?: GuestLanguage;
  seed?: number;
  tools?: string[];
  metadata?: Record<string, unknown>;
  tool_constraints?: { timeout_seconds?: number; max_memory_mb?: number };
}

/** The task endpoints of /api/v1 over a durable runtime (auth, batches, events and webhooks come later). */
export function registerTaskRoutes(app: FastifyInstance, runtime: Runtime, store: TaskStore): void {
  app.post<{ Body: CreateBody }>(
    '/api/v1/tasks',
    { schema: { body: createBody } },
    async (request, reply) => {
      const b = request.body;
      const c = b.tool_constraints;
      const limits = {
        ...(c?.timeout_seconds === undefined ? {} : { timeoutMs: c.timeout_seconds * 1000 }),
        ...(c?.max_memory_mb === undefined ? {} : { memoryBytes: Math.round(c.max_memory_mb * 1024 * 1024) }),
      };
      const key = request.headers['idempotency-key'];
      if (Array.isArray(key) || (key !== undefined && (key.length === 0 || key.length > 255))) {
        throw new CodecallError('BAD_REQUEST', 'Idempotency-Key must be one value of 1-255 characters', {
          details: { field: 'Idempotency-Key' },
        });
      }
      const idempotency =
        key === undefined
          ? {}
          : { idempotency: { key, requestHash: sha256Hex(canonicalJson(request.body)) } };
      const view = await runtime.submit(
        {
          code: b.code,
          ...(b.language ? { language: b.language } : {}),
          ...(b.seed === undefined ? {} : { seed: b.seed }),
          ...(b.tools ? { tools: b.tools } : {}),
          ...(b.metadata ? { metadata: b.metadata } : {}),
          ...(Object.keys(limits).length > 0 ? { limits } : {}),
        },
        idempotency,
      );
      // The response of creation; a repeat with the same key and body gets the same one.
      return reply
        .status(201)
        .send({ task_id: view.task_id, status: 'pending', created_at: view.created_at });
    },
  );

  app.get<{ Querystring: { status?: string; limit?: string; cursor?: string } }>(
    '/api/v1/tasks',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: STATUSES },
            limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
            cursor: { type: 'string', maxLength: 512 },
          },
        },
      },
    },
    async (request) => {
      const q = request.query;
      return runtime.list({
        ...(q.status ? { status: q.status as TaskStatus } : {}),
        ...(q.limit === undefined ? {} : { limit: Number(q.limit) }),
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
      });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/tasks/:id',
    { schema: { params: { type: 'object', properties: { id } } } },
    async (request) => {
      const view = await runtime.get(request.params.id);
      if (!view) throw new CodecallError('NOT_FOUND', `no task ${request.params.id}`);
      return view;
    },
  );

  app.get<{ Params: { id: string }; Querystring: { after?: string; limit?: string } }>(
    '/api/v1/tasks/:id/events',
    {
      schema: {
        params: { type: 'object', properties: { id } },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            after: { type: 'string', pattern: '^[0-9]{1,12}$' },
            limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
          },
        },
      },
    },
    async (request) => {
      const taskId = request.params.id;
      const limit = Number(request.query.limit ?? 100);
      if (limit < 1 || limit > 1000)
        throw new CodecallError('INVALID_ARGUMENT', 'limit must be from 1 to 1000');
      if (!(await store.getTask(taskId))) throw new CodecallError('NOT_FOUND', `no task ${taskId}`);
      // The journal, verified, from after the given seq: the task's audit trail of what happened and who acted.
      const entries = await store.readJournal(taskId, { afterSeq: Number(request.query.after ?? 0) });
      const page = entries.slice(0, limit);
      return {
        events: page.map((e) => ({ seq: e.seq, type: e.type, data: e.data, created_at: e.createdAt })),
        next_after: entries.length > limit ? (page.at(-1)?.seq ?? null) : null,
      };
    },
  );

  app.post<{ Params: { id: string }; Body: { action: 'pause' | 'resume' | 'cancel'; reason?: string } }>(
    '/api/v1/tasks/:id/control',
    {
      schema: {
        params: { type: 'object', properties: { id } },
        body: {
          type: 'object',
          required: ['action'],
          additionalProperties: false,
          properties: {
            action: { type: 'string', enum: ['pause', 'resume', 'cancel'] },
            reason: { type: 'string', maxLength: 2000 },
          },
        },
      },
    },
    async (request) => {
      const { id: taskId } = request.params;
      const { action, reason } = request.body;
      const who = { actor: 'api', ...(reason === undefined ? {} : { reason }) };
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
        params: { type: 'object', properties: { id, approval_id: id } },
        body: {
          type: 'object',
          required: ['decision'],
          additionalProperties: false,
          properties: {
            decision: { type: 'string', enum: ['approve', 'reject'] },
            reason: { type: 'string', maxLength: 2000 },
          },
        },
      },
    },
    async (request) => {
      const { decision, reason } = request.body;
      return runtime.decide(
        request.params.id,
        [{ approvalId: request.params.approval_id, decision, ...(reason === undefined ? {} : { reason }) }],
        { actor: 'api' },
      );
    },
  );

  app.post<{ Params: { id: string }; Body: { name: string; value: unknown } }>(
    '/api/v1/tasks/:id/input',
    {
      schema: {
        params: { type: 'object', properties: { id } },
        body: {
          type: 'object',
          required: ['name', 'value'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, value: {} },
        },
      },
    },
    async (request) =>
      runtime.provideInput(request.params.id, request.body.name, request.body.value, { actor: 'api' }),
  );
}
