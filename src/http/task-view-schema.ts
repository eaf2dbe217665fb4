// The schema of a task's view (GET /api/v1/tasks/{id}), shared by the routes and the OpenAPI document.
import { anyValue, corruptMark, nullable, open, status, timestamp } from './schema-parts.ts';

/** Where a call ran that a revision took over or stands beside (CallOrigin; no task_id: the same task). */
const origin = {
  type: 'object',
  ...open,
  required: ['call_id'],
  properties: { task_id: { type: 'string' }, call_id: { type: 'string' } },
} as const;
/** An earlier attempt's completed call (ADR 0034). */
const earlierCall = {
  type: 'object',
  ...open,
  properties: { origin, tool: { type: 'string' }, arguments: anyValue },
} as const;
/** A call a needs_attention task waits on a decision for. */
const attentionCall = {
  call_id: { type: 'string' },
  tool: { type: 'string' },
  arguments: anyValue,
  earlier: {
    ...earlierCall,
    description:
      'set when a revision calls this unsafe/keyed tool with other arguments than an earlier attempt did: ' +
      'the earlier, completed call (retry runs the new one, skip gives it a result, fail ends the task)',
  },
} as const;

/** A task as GET /api/v1/tasks/{id} shows it (TaskView in src/durable/task-view.ts). */
export const taskViewSchema = {
  $id: 'TaskView',
  type: 'object',
  required: ['task_id', 'status', 'created_at', 'updated_at'],
  ...open,
  properties: {
    task_id: { type: 'string' },
    status,
    pause_reason: nullable('string'),
    checkpoint_id: {
      ...nullable('string'),
      description: '<task_id>:<seq> of the last committed journal entry',
    },
    resumable: { type: 'boolean' },
    pending_approvals: {
      type: 'array',
      items: {
        type: 'object',
        ...open,
        properties: { id: { type: 'string' }, tool: { type: 'string' }, arguments: anyValue },
      },
    },
    pending_inputs: {
      type: 'array',
      items: {
        type: 'object',
        ...open,
        properties: {
          call_id: { type: 'string' },
          name: { type: 'string' },
          deadline: nullable('string'),
          for_call: { type: 'string', description: "a tool's request mid-call (MCP elicitation): its call" },
          message: { type: 'string' },
          schema: { description: 'the JSON Schema the answer should match' },
        },
      },
    },
    attention: { ...nullable('object'), ...open, properties: attentionCall },
    attention_calls: {
      type: 'array',
      description: 'every call in doubt a needs_attention task waits on (decided in one round)',
      items: { type: 'object', ...open, properties: attentionCall },
    },
    current_step: {
      type: 'number',
      description: 'exec mode: 1; agent mode: the model round trip being worked on (0 before the first)',
    },
    progress: {
      type: 'object',
      ...open,
      properties: {
        tool_calls_completed: { type: 'number', description: 'calls with an outcome (taken-over ones too)' },
        tool_calls_carried: {
          type: 'number',
          description: 'calls taken over from an earlier attempt instead of run (0 in lists)',
        },
        journal_entries: { type: 'number' },
        steps_completed: { type: 'number' },
      },
    },
    code: { ...nullable('string'), description: 'exec mode: the program that was sent' },
    instruction: { ...nullable('string'), description: 'agent mode: what the model was asked to do' },
    mode: { type: ['string', 'null'], enum: ['code', 'function_calling', null] },
    answer_schema: {
      ...nullable('object'),
      ...open,
      description: 'agent mode: the JSON Schema the final answer must match (null: none)',
    },
    steps: {
      type: ['array', 'null'],
      description:
        'agent mode: each model round trip with the reply, the code it ran, its tool calls and result',
      items: {
        type: 'object',
        ...open,
        properties: {
          step: { type: 'number' },
          reply: nullable('string'),
          code: nullable('string'),
          tool_calls: {
            type: 'array',
            items: {
              type: 'object',
              ...open,
              properties: {
                call_id: { type: 'string' },
                tool: { type: 'string' },
                arguments: anyValue,
                carried_from: {
                  ...origin,
                  description: 'not run: its outcome was taken over from this call',
                },
                ok: nullable('boolean'),
                result: anyValue,
                error: anyValue,
              },
            },
          },
          ok: nullable('boolean'),
          final: { type: 'boolean' },
          output: { type: 'array', items: { type: 'object', ...open } },
          value: anyValue,
          error: anyValue,
          model: nullable('string'),
          usage: { ...nullable('object'), ...open },
        },
      },
    },
    revision: {
      ...nullable('object'),
      ...open,
      description:
        'set when the task revises an ended one (POST /api/v1/tasks/{id}/revise, ADR 0034): what it took over. ' +
        'Counts come from its journal: lists show 0 and no calls',
      properties: {
        revision_of: { type: 'string', description: 'the task this one revises' },
        rerun_reads: { type: 'boolean', description: 'read/idempotent calls run again instead' },
        offered: { type: 'number', description: 'completed calls offered (journaled at its first run)' },
        carried: { type: 'number', description: 'calls taken over instead of run' },
        not_repeated: {
          type: 'array',
          description: 'offered calls of tools that change the world that the revision has not made (so far)',
          items: earlierCall,
        },
      },
    },
    revised_by: {
      type: 'object',
      ...open,
      required: ['task_ids', 'total'],
      description:
        'set when tasks revise this one (POST /api/v1/tasks/{id}/revise): they, newest last. Absent when none ' +
        'does, and in lists (GET the task)',
      properties: {
        task_ids: {
          type: 'array',
          items: { type: 'string' },
          description: 'the revisions, oldest first: the newest 20 when there are more',
        },
        total: { type: 'number', description: 'how many tasks revise this one' },
      },
    },
    result: {
      ...nullable('object'),
      ...open,
      properties: {
        output: anyValue,
        execution_log: {
          type: 'array',
          items: {
            type: 'object',
            ...open,
            properties: { level: { type: 'string' }, message: { type: 'string' } },
          },
        },
        resources_used: {
          type: 'object',
          ...open,
          properties: {
            cpu_time_s: { type: 'number' },
            memory_mb: { type: 'number' },
            wall_time_s: { type: 'number' },
            tool_calls: { type: 'number' },
          },
        },
      },
    },
    error: {
      ...nullable('object'),
      ...open,
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        name: { type: 'string', description: "The class of the program's error (TypeError, ValueError)" },
        line: {
          type: 'integer',
          description: 'Where the program failed: 1-based, in the program as written',
        },
        column: { type: 'integer', description: '1-based, when the driver tells it' },
      },
    },
    corrupt: {
      ...corruptMark,
      description:
        'Set when the store cannot read the task as written (its journal chain or a column of its row): the ' +
        'parts that need it are empty',
    },
    language: { type: 'string' },
    metadata: { ...nullable('object'), ...open },
    network_access: {
      ...nullable('object'),
      description: "Where the program's fetch may go (tool_constraints.network_access); null: nowhere",
      properties: {
        allow: { type: 'array', items: { type: 'string' } },
        methods: { type: 'array', items: { type: 'string' } },
        max_requests: { type: 'integer' },
        max_bytes: { type: 'integer' },
        timeout_seconds: { type: 'number' },
        allow_http: { type: 'boolean' },
      },
    },
    budgets: {
      type: 'object',
      ...open,
      description:
        "The task's tool budgets (tool_constraints.budgets, ADR 0044) and what it used of them (used: null in " +
        'lists); absent when it sets none',
      properties: {
        max_calls: { type: 'integer' },
        max_cost: { type: 'number' },
        tools: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            ...open,
            properties: { max_calls: { type: 'integer' }, max_wall_seconds: { type: 'number' } },
          },
        },
        used: {
          ...nullable('object'),
          ...open,
          properties: {
            calls: { type: 'integer' },
            cost: { type: 'number' },
            tools: {
              type: 'object',
              additionalProperties: {
                type: 'object',
                ...open,
                properties: { calls: { type: 'integer' }, wall_seconds: { type: 'number' } },
              },
            },
          },
        },
      },
    },
    attempts: { type: 'number' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;
