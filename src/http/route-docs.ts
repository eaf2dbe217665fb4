import type { FastifyInstance, RouteOptions } from 'fastify';
import {
  approvalsResponse,
  principalResponse,
  revisedResponse,
  batchCreatedResponse,
  batchResponse,
  createdResponse,
  errorResponses,
  eventResponse,
  eventsResponse,
  statusResponse,
  taskListResponse,
  taskViewResponse,
  toolsResponse,
} from './schemas.ts';
import { statsResponse } from './stats-schema.ts';

const openObject = { type: 'object', additionalProperties: true } as const;

interface RouteDoc {
  readonly summary: string;
  readonly tags: readonly string[];
  readonly response?: Readonly<Record<string, unknown>>;
  /** Routes anyone may call (no API key). */
  readonly public?: boolean;
}

/** What the OpenAPI document says of each route, by `METHOD path`; a route's own schema wins. */
const DOCS: Readonly<Record<string, RouteDoc>> = {
  'GET /healthz': { summary: 'Liveness', tags: ['service'], response: statusResponse, public: true },
  'GET /readyz': { summary: 'Readiness', tags: ['service'], response: statusResponse, public: true },
  'GET /metrics': {
    summary: 'Prometheus metrics over every tenant (the metrics token or an admin key; open without auth)',
    tags: ['service'],
    response: {
      200: {
        description: 'Prometheus text format',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...errorResponses,
    },
  },
  'GET /api/v1/openapi.json': {
    summary: 'This OpenAPI document',
    tags: ['service'],
    response: { 200: { description: 'OpenAPI 3.1', type: 'object', additionalProperties: true } },
    public: true,
  },
  'POST /api/v1/tasks': { summary: 'Create a task', tags: ['tasks'], response: createdResponse },
  'POST /api/v1/tasks/batch': {
    summary: 'Create up to 1,000 tasks at once (all or none)',
    tags: ['batches'],
    response: batchCreatedResponse,
  },
  'GET /api/v1/batches/:id': { summary: 'Get a batch', tags: ['batches'], response: batchResponse },
  'POST /api/v1/tasks/:id/attention': {
    summary: 'Resolve a call left in doubt by a crash (retry, skip or fail)',
    tags: ['tasks'],
    response: taskViewResponse,
  },
  'POST /api/v1/tasks/:id/revise': {
    summary:
      'Fix and continue: a new task runs this ended code task with fixed code, taking over the calls it completed',
    tags: ['tasks'],
    response: revisedResponse,
  },
  'POST /api/v1/keys': {
    summary: 'Create an API key (admin; the key is shown once)',
    tags: ['keys'],
    response: { 201: { description: 'The new key', ...openObject } },
  },
  'GET /api/v1/keys': {
    summary: 'List API keys, without secrets (admin)',
    tags: ['keys'],
    response: { 200: { description: 'The keys', ...openObject } },
  },
  'DELETE /api/v1/keys/:id': {
    summary: 'Revoke an API key (admin)',
    tags: ['keys'],
    response: { 200: { description: 'The revoked key', ...openObject } },
  },
  'GET /api/v1/tasks': {
    summary: 'List tasks, oldest first (order=newest: newest first); next_cursor pages on in the same order',
    tags: ['tasks'],
    response: taskListResponse,
  },
  'GET /api/v1/tasks/:id': { summary: 'Get a task', tags: ['tasks'], response: taskViewResponse },
  'GET /api/v1/tasks/:id/events': {
    summary: "A task's journal and audit log (its audit trail), paged",
    tags: ['tasks'],
    response: eventsResponse,
  },
  'GET /api/v1/tasks/:id/events/:seq': {
    summary: 'One journal entry in full (what a page of events summarised)',
    tags: ['tasks'],
    response: eventResponse,
  },
  'GET /api/v1/tasks/:id/stream': {
    summary: "A task's events as Server-Sent Events (text/event-stream)",
    tags: ['tasks'],
    response: {
      200: {
        description:
          'An event stream: view, status, log, journal; each event has an id (the last journal seq sent): ' +
          'reconnect with Last-Event-ID (or ?after=) for exactly the entries after it',
      },
    },
  },
  'GET /api/v1/tasks/:id/artifacts/:name': {
    summary: 'Download a file the task left in its working directory (a name with / is sent as %2F)',
    tags: ['tasks'],
    response: { 200: { description: 'The bytes of the file, as an attachment' } },
  },
  'POST /api/v1/tasks/:id/control': {
    summary: 'Pause, resume or cancel a task',
    tags: ['tasks'],
    response: taskViewResponse,
  },
  'POST /api/v1/tasks/:id/approvals/:approval_id': {
    summary: 'Approve or reject a pending tool call',
    tags: ['tasks'],
    response: taskViewResponse,
  },
  'POST /api/v1/tasks/:id/approvals': {
    summary: "Approve or reject several (by default all) of a task's pending calls in one decision",
    tags: ['tasks'],
    response: taskViewResponse,
  },
  'GET /api/v1/me': {
    summary: 'Who the API key is (its tenant and role): the console shows it and checks a key with it',
    tags: ['keys'],
    response: principalResponse,
  },
  'GET /api/v1/tools': {
    summary: "The tools this server's programs may call: name, description, effect, approval, input schema",
    tags: ['service'],
    response: toolsResponse,
  },
  'GET /api/v1/approvals': {
    summary:
      'The approvals inbox, a page of waiting tasks at a time: their pending approvals with the exact arguments',
    tags: ['tasks'],
    response: approvalsResponse,
  },
  'GET /api/v1/task-events': {
    summary: 'Status changes of every task you may see, as Server-Sent Events (text/event-stream)',
    tags: ['tasks'],
    response: {
      200: {
        description:
          'An event stream: ready (`{ tenant, resumed }`), then task (the task as the list shows it, fields over ' +
          "4 KiB summarised) at each status change, and corrupt (a task the store cannot read, as in a list's " +
          '`corrupt`). Every event has an `id:`, the status change cursor: reconnect with `Last-Event-ID` (or ' +
          '`?after=`) to get exactly the changes after it (`ready` then says `resumed: true`). A cursor that is not ' +
          'one is 400 BAD_REQUEST; one past the end is taken as the end',
      },
    },
  },
  'POST /mcp': {
    summary:
      'The MCP endpoint (Streamable HTTP, stateless): search_tools and execute (code mode) and the ' +
      "task surface, as the key's tenant (ADR 0049)",
    tags: ['mcp'],
  },
  'GET /api/v1/stats/overview': {
    summary:
      "The operator's view over a window (default an hour): throughput, queue depth per tenant, running and " +
      'paused tasks, pause reasons, error codes, task and tool call latency (p50/p99), from the store (ADR 0054)',
    tags: ['service'],
    response: statsResponse,
  },
  'POST /api/v1/tasks/:id/input': {
    summary: 'Provide the input a task waits for',
    tags: ['tasks'],
    response: taskViewResponse,
  },
};

/**
 * Fills in the documentation and response schemas of the routes registered after it (kept here, not in the route
 * files, so the routes stay about behaviour). Every /api/v1 route gets the error envelope for 4xx and 5xx.
 */
export function addRouteDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const doc = DOCS[`${methods[0]} ${route.url}`];
    const schema = route.schema ?? {};
    const api = route.url.startsWith('/api/v1/');
    if (!doc && !api) return;
    route.schema = {
      ...(doc ? { summary: doc.summary, tags: [...doc.tags] } : {}),
      ...(doc?.public ? { security: [] } : {}),
      ...schema,
      response: schema.response ?? {
        ...(doc?.response ?? {}),
        ...(api ? errorResponses : {}),
      },
    };
  });
}
