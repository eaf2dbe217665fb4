import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseTraceHeaders } from '../telemetry/index.ts';
import { CodecallError } from '../errors/index.ts';
import { JOURNAL_PAGE_BYTES, readTaskForView } from '../spec/index.ts';
import type { CorruptTask, JournalEntry, TaskRecord, TaskStatus, TaskStore } from '../spec/index.ts';
import { mergedEvents, summarised } from './task-events.ts';
import type { TaskEvent } from './task-events.ts';
import { upToBreak } from './up-to-break.ts';
import { canSee, listedTenant } from './principal.ts';
import { multipartTaskBody } from './multipart-task.ts';
import { toSubmitInput } from './submit-body.ts';
import { idempotencyKeyOf, idempotencyOf } from './idempotency-key.ts';
import { idSchema, pageQuery, STATUSES, taskBodySchema } from './task-schemas.ts';
import type { TaskBody } from './task-schemas.ts';
import type { CallbackCheck, Runtime } from '../api/index.ts';

const params = { type: 'object', properties: { id: idSchema } } as const;

export interface TaskRouteOptions {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  readonly checkCallback: CallbackCheck;
}

/**
 * A task the caller may see, or NOT_FOUND: another tenant's task does not exist for them. A task whose row is
 * corrupt is still found (its tenant column says whose it is): its view answers, marked corrupt.
 */
export async function visibleTask(
  store: TaskStore,
  request: FastifyRequest,
  taskId: string,
): Promise<TaskRecord | CorruptTask> {
  const task = await readTaskForView(store, taskId);
  if (!task || !canSee(request.principal, task.tenant)) {
    throw new CodecallError('NOT_FOUND', `no task ${taskId}`, { details: { task_id: taskId } });
  }
  return task;
}

/** Creating, listing and reading tasks, and their events (journal and audit log). */
export function registerTaskRoutes(app: FastifyInstance, options: TaskRouteOptions): void {
  const { runtime, store } = options;

  app.post<{ Body: TaskBody }>(
    '/api/v1/tasks',
    {
      schema: { body: taskBodySchema },
      // A multipart body (the task as JSON, files as parts) is turned into the JSON body before validation.
      preValidation: async (request) => {
        if (request.isMultipart()) request.body = (await multipartTaskBody(request)) as TaskBody;
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      const { tenant, actor } = request.principal;
      const given = toSubmitInput(request.body, {
        tenant,
        checkCallback: options.checkCallback,
      });
      // The caller's trace: the task's runs join it, wherever and whenever they run (ADR 0053).
      const traceContext = parseTraceHeaders(request.headers.traceparent, request.headers.tracestate);
      const input = traceContext ? { ...given, traceContext } : given;
      const idempotency = idempotencyOf(request, key, request.body);
      const view = await runtime.submit(input, { ...idempotency, actor });
      // The response of creation; a repeat with the same key and body gets the same one.
      return reply
        .status(201)
        .send({ task_id: view.task_id, status: 'pending', created_at: view.created_at });
    },
  );

  app.get<{
    Querystring: {
      status?: string;
      session_id?: string;
      tenant?: string;
      limit?: string;
      cursor?: string;
      order?: 'oldest' | 'newest';
    };
  }>(
    '/api/v1/tasks',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: STATUSES },
            session_id: idSchema,
            tenant: idSchema,
            order: { type: 'string', enum: ['oldest', 'newest'] },
            ...pageQuery,
          },
        },
      },
    },
    async (request) => {
      const q = request.query;
      const tenant = listedTenant(request.principal, q.tenant);
      // Items carry what they hold up to 4 KiB a field (a program, metadata, arguments): GET /tasks/{id} the rest.
      const page = await runtime.listItems({
        ...(q.status ? { status: q.status as TaskStatus } : {}),
        ...(tenant === undefined ? {} : { tenant }),
        ...(q.session_id === undefined ? {} : { sessionId: q.session_id }),
        ...(q.limit === undefined ? {} : { limit: Number(q.limit) }),
        ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        ...(q.order === undefined ? {} : { order: q.order }),
      });
      return page;
    },
  );

  app.get<{ Params: { id: string } }>('/api/v1/tasks/:id', { schema: { params } }, async (request) => {
    await visibleTask(store, request, request.params.id);
    const view = await runtime.get(request.params.id);
    if (!view) throw new CodecallError('NOT_FOUND', `no task ${request.params.id}`);
    return view;
  });

  app.get<{ Params: { id: string }; Querystring: { after?: string; limit?: string } }>(
    '/api/v1/tasks/:id/events',
    {
      schema: {
        params,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            after: { type: 'string', pattern: '^[0-9]{1,12}(-[0-9]{1,12})?$' },
            limit: pageQuery.limit,
          },
        },
      },
    },
    async (request) => {
      const taskId = request.params.id;
      const limit = Number(request.query.limit ?? 100);
      if (limit < 1 || limit > 1000) {
        throw new CodecallError('BAD_REQUEST', 'limit must be from 1 to 1000', {
          details: { field: 'limit' },
        });
      }
      await visibleTask(store, request, taskId);
      const [afterJournal = 0, afterAudit = 0] = (request.query.after ?? '0-0').split('-').map(Number);
      // One more of each than a page needs is enough to merge the page in order (see mergedEvents). A broken
      // chain ends its log where it breaks: the entries before it are sent, with `corrupt` saying where.
      // The journal's page is also cut by bytes (a page of big entries is short): then it ends after its last one.
      let more = false;
      const readPage = async (n: number): Promise<JournalEntry[]> => {
        const page = await store.readJournalPage(taskId, {
          afterSeq: afterJournal,
          limit: n,
          maxBytes: JOURNAL_PAGE_BYTES,
        });
        more = page.more;
        return page.entries;
      };
      const [journal, audit] = await Promise.all([
        upToBreak(readPage, afterJournal, limit + 1),
        upToBreak((n) => store.readAudit(taskId, { afterSeq: afterAudit, limit: n }), afterAudit, limit + 1),
      ]);
      const journalCut = journal.corrupt === null && more && journal.entries.length <= limit;
      const page = mergedEvents(journal.entries, audit.entries, {
        afterJournal,
        afterAudit,
        limit,
        journalCut,
      });
      const events = { ...page, events: page.events.map(summarised) };
      const corrupt = journal.corrupt ?? audit.corrupt;
      return corrupt === null ? events : { ...events, corrupt };
    },
  );

  // One journal entry in full: what a page of events summarised (`truncated`).
  app.get<{ Params: { id: string; seq: string } }>(
    '/api/v1/tasks/:id/events/:seq',
    {
      schema: {
        params: {
          type: 'object',
          properties: { id: idSchema, seq: { type: 'string', pattern: '^[1-9][0-9]{0,11}$' } },
        },
      },
    },
    async (request) => {
      const taskId = request.params.id;
      const seq = Number(request.params.seq);
      await visibleTask(store, request, taskId);
      const [entry] = await store.readJournal(taskId, { afterSeq: seq - 1, limit: 1 });
      if (entry?.seq !== seq) {
        throw new CodecallError('NOT_FOUND', `task ${taskId} has no journal entry ${seq}`, {
          details: { task_id: taskId, seq },
        });
      }
      const event: TaskEvent = {
        source: 'journal',
        seq: entry.seq,
        type: entry.type,
        data: entry.data,
        created_at: entry.createdAt,
      };
      return event;
    },
  );
}
