// Response schemas of the HTTP API, shared by the routes and the OpenAPI document (GET /api/v1/openapi.json).
// Fastify SERIALIZES responses with these (fast-json-stringify drops what a schema does not list), so every object
// keeps `additionalProperties: true`: a field added to a view is sent even before it is described here.
import { LISTED_FIELDS } from '../api/index.ts';
import { anyValue, corruptMark, nullable, open, status, timestamp } from './schema-parts.ts';
import { taskViewSchema } from './task-view-schema.ts';

export { taskViewSchema };

/** A task a list skipped because the store cannot read it as written (CorruptTaskItem in src/api/corrupt-item.ts). */
const corruptItems = {
  type: 'array',
  description:
    'Tasks skipped because the store cannot read them as written (a garbled row, a broken journal chain); ' +
    'GET /api/v1/tasks/{id} shows each with `corrupt` set',
  items: {
    type: 'object',
    ...open,
    properties: {
      task_id: { type: 'string' },
      tenant: { type: 'string' },
      status,
      code: { type: 'string', enum: ['CHECKPOINT_CORRUPT'] },
      message: { type: 'string' },
    },
  },
} as const;

/** The error envelope of every 4xx and 5xx response. */
export const errorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['error'],
  ...open,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      ...open,
      properties: {
        code: { type: 'string', description: 'Stable error code (e.g. NOT_FOUND, ILLEGAL_TRANSITION)' },
        message: { type: 'string' },
        details: { type: 'object', ...open },
      },
    },
  },
} as const;

/** What a list or a stream gives of a field too big for it (TruncatedField in src/api/task-view.ts). */
const truncatedField = {
  type: 'object',
  ...open,
  description: 'A field too big for a list: its UTF-8 size, sha256 and (text) first 256 characters',
  properties: {
    truncated: { type: 'boolean', enum: [true] },
    bytes: { type: 'number' },
    sha256: { type: 'string' },
    head: { type: 'string' },
  },
} as const;

/** The fields of a view a list summarises when over 4 KiB (ListedField in src/api/task-view.ts). */
const listedFields = LISTED_FIELDS;

const viewFields: Readonly<Record<string, object>> = taskViewSchema.properties;

/**
 * A task as GET /api/v1/tasks and GET /api/v1/task-events give it: the view, each field of `listedFields` over
 * 4 KiB (as JSON) given as a `truncatedField` and named in `truncated` (GET /api/v1/tasks/{id} has them whole).
 */
export const taskListItemSchema = {
  $id: 'TaskListItem',
  type: 'object',
  required: taskViewSchema.required,
  ...open,
  properties: {
    ...taskViewSchema.properties,
    ...Object.fromEntries(
      listedFields.map((f) => {
        const { description, ...whole } = (viewFields[f] ?? {}) as { description?: string };
        const summary = `over 4 KiB: a truncated field (named in \`truncated\`)`;
        return [
          f,
          {
            description: description ? `${description}; ${summary}` : summary,
            anyOf: [whole, truncatedField],
          },
        ];
      }),
    ),
    truncated: {
      type: 'array',
      items: { type: 'string', enum: listedFields },
      description:
        'The fields over 4 KiB, each given as `{ truncated, bytes, sha256, head? }` (GET /api/v1/tasks/{id} has them)',
    },
  },
} as const;

/** Schemas referenced by `$ref` from the route schemas; registered with `app.addSchema` before the routes. */
export const sharedSchemas = [errorSchema, taskViewSchema, taskListItemSchema] as const;

const ref = (id: (typeof sharedSchemas)[number]['$id']) => ({ $ref: `${id}#` }) as const;

export const errorResponses = {
  '4xx': { description: 'Bad request, not found, conflict, ... (the error envelope)', ...ref('Error') },
  '5xx': { description: 'Internal error (the error envelope)', ...ref('Error') },
} as const;

export const taskViewResponse = { 200: { description: 'The task', ...ref('TaskView') } } as const;

/** A revision: the new task's view (a repeated Idempotency-Key and body gives the task it created). */
export const revisedResponse = {
  201: { description: 'The new task (the revision), pending', ...ref('TaskView') },
} as const;

export const createdResponse = {
  201: {
    description: 'Created (or, with a repeated Idempotency-Key and body, the task it created)',
    type: 'object',
    required: ['task_id', 'status', 'created_at'],
    ...open,
    properties: { task_id: { type: 'string' }, status, created_at: timestamp },
  },
} as const;

export const taskListResponse = {
  200: {
    description: 'A page of tasks, oldest first',
    type: 'object',
    ...open,
    properties: {
      tasks: {
        type: 'array',
        items: ref('TaskListItem'),
        description: 'Each task with its fields over 4 KiB summarised (`truncated`)',
      },
      next_cursor: { ...nullable('string'), description: 'Pass as `cursor` for the next page' },
      corrupt: corruptItems,
    },
  },
} as const;

const eventItem = {
  type: 'object',
  ...open,
  properties: {
    source: { type: 'string', enum: ['journal', 'audit'] },
    seq: { type: 'number' },
    type: { type: 'string' },
    data: { type: 'object', ...open },
    created_at: timestamp,
    truncated: {
      type: 'array',
      items: { type: 'string' },
      description:
        'Fields of `data` over 16 KiB, each given as `{ truncated, bytes, sha256 }` (GET .../events/{seq} has them)',
    },
  },
} as const;

/** One journal entry in full. */
export const eventResponse = {
  200: { description: 'One journal entry of the task, its data in full', ...eventItem },
} as const;

export const eventsResponse = {
  200: {
    description:
      "The task's journal and audit entries after `after`, in one order (at most 1 MiB of journal data a page)",
    type: 'object',
    ...open,
    properties: {
      events: { type: 'array', items: eventItem },
      next_after: { ...nullable('string'), description: 'Pass as `after` for the next page (`J-A`)' },
      corrupt: {
        ...corruptMark,
        description: 'Present when a log breaks its chain: the events end before the broken `seq`',
        properties: { ...corruptMark.properties, seq: { type: 'number' } },
      },
    },
  },
} as const;

export const approvalsResponse = {
  200: {
    description:
      'A page of the pending approvals of the tasks the caller may see: those of up to `limit` waiting tasks (default 100, at most 1000), oldest task first',
    type: 'object',
    ...open,
    properties: {
      approvals: {
        type: 'array',
        items: {
          type: 'object',
          ...open,
          properties: {
            task_id: { type: 'string' },
            approval_id: { type: 'string' },
            tool: { type: 'string' },
            arguments: {
              ...anyValue,
              description:
                'The exact arguments the call would run with (over 16 KiB: their size and digest; GET /api/v1/tasks/{id}/events/{seq} has them whole)',
            },
            requested_at: timestamp,
            tenant: { type: 'string' },
            session_id: nullable('string'),
            expires_at: {
              ...nullable('string'),
              description:
                "When the request expires (approvalTtlSeconds, the tool's expiresAfterSeconds); null: never",
            },
            may_decide: {
              type: 'boolean',
              description:
                "Whether the caller may decide it: the runtime's own check (approverRoles, approvalSeparation, the tool's approval policy)",
            },
          },
        },
      },
      corrupt: corruptItems,
      next_cursor: {
        ...nullable('string'),
        description: 'The next page (`?cursor=`); null: no more tasks wait',
      },
    },
  },
} as const;

export const principalResponse = {
  200: {
    description: 'Who the API key is: its tenant, role and id (null without auth)',
    type: 'object',
    ...open,
    properties: {
      tenant: { type: 'string' },
      role: { type: 'string', enum: ['admin', 'member', 'approver'] },
      key_id: nullable('string'),
      actor: { type: 'string' },
      auth: { type: 'string', enum: ['key', 'none'] },
    },
  },
} as const;

export const toolsResponse = {
  200: {
    description: "The tools this server's programs may call, in definition order",
    type: 'object',
    ...open,
    properties: {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          ...open,
          properties: {
            name: {
              type: 'string',
              description: 'As a program calls it: `namespace.name` (`tools.get_weather`)',
            },
            namespace: { type: 'string' },
            description: { type: 'string' },
            effect: { type: 'string', enum: ['read', 'idempotent', 'keyed', 'unsafe'] },
            approval: {
              type: 'string',
              enum: ['never', 'always', 'by_arguments'],
              description: 'Whether its calls wait for a human: never, always, or as its arguments decide',
            },
            input_schema: { ...anyValue, description: 'Its arguments as JSON Schema' },
            cost: {
              ...anyValue,
              description:
                "What a call costs against a task's max_cost: a number, or by_arguments (computed from each " +
                "call's arguments); absent: 1",
            },
            budget: {
              type: 'object',
              ...open,
              description:
                "The tool's own budget in every task (a task's tool_constraints.budgets may only tighten it); " +
                'absent when it declares none',
              properties: { max_calls: { type: 'integer' }, max_wall_seconds: { type: 'number' } },
            },
          },
        },
      },
    },
  },
} as const;

export const batchCreatedResponse = {
  201: {
    description: 'The batch and its tasks were stored (all of them)',
    type: 'object',
    ...open,
    properties: {
      batch_id: { type: 'string' },
      task_ids: { type: 'array', items: { type: 'string' } },
      created_at: timestamp,
    },
  },
} as const;

export const batchResponse = {
  200: {
    description: 'The batch with a count of its tasks per status',
    type: 'object',
    ...open,
    properties: {
      batch_id: { type: 'string' },
      tenant: { type: 'string' },
      size: { type: 'number' },
      counts: { type: 'object', additionalProperties: { type: 'number' } },
      task_ids: { type: 'array', items: { type: 'string' } },
      callback_url: nullable('string'),
      created_at: timestamp,
      completed_at: nullable('string'),
    },
  },
} as const;

export const statusResponse = {
  200: {
    description: 'OK',
    type: 'object',
    ...open,
    properties: { status: { type: 'string' } },
  },
} as const;
