import { TASK_TRANSITIONS } from '../spec/index.ts';
import type { AgentMode, GuestLanguage, TaskBudgetsWire } from '../spec/index.ts';

export const STATUSES = Object.keys(TASK_TRANSITIONS);
export const idSchema = { type: 'string', minLength: 1, maxLength: 128 } as const;
const name = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' } as const;
const names = {
  type: 'array',
  maxItems: 1000,
  items: { type: 'string', minLength: 1, maxLength: 200 },
} as const;

/** One task as POST /tasks (and each item of POST /tasks/batch) takes it. */
export const taskBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1 },
    instruction: { type: 'string', minLength: 1 },
    language: { type: 'string', enum: ['javascript', 'typescript', 'python'] },
    mode: { type: 'string', enum: ['code', 'function_calling'] },
    max_steps: { type: 'integer', minimum: 1, maximum: 100 },
    max_step_retries: { type: 'integer', minimum: 0, maximum: 10 },
    model: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:/@-]+$' },
    // A JSON Schema the final answer must match (issue 23); compiled by the agent at submit.
    answer_schema: { type: 'object' },
    seed: { type: 'integer' },
    session_id: name,
    tools: names,
    metadata: { type: 'object' },
    priority: { type: 'integer', minimum: -100, maximum: 100 },
    max_retries: { type: 'integer', minimum: 0, maximum: 10 },
    deadline_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 31_536_000 },
    callback_url: { type: 'string', minLength: 1, maxLength: 2048 },
    files: {
      type: 'array',
      maxItems: 1000,
      description: 'Input files: in the working directory when the program starts (Python)',
      items: {
        type: 'object',
        required: ['name', 'content_base64'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 1024 },
          content_base64: { type: 'string' },
        },
      },
    },
    tool_constraints: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // A timer past 2^31 ms fires at once (Node clamps it to 1 ms), so a longer timeout would be none.
        timeout_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 2_147_483 },
        // CPU time the program may compute (its waiting for tools is not counted): CPU_LIMIT past it.
        cpu_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 2_147_483 },
        // The sandbox's floor (MIN_MEMORY_BYTES), refused here so the error names this field.
        max_memory_mb: { type: 'number', minimum: 2 },
        allowed_libraries: names,
        blocked_commands: names,
        // Where the program's fetch may go (issue 21); the runtime checks the entries (checkNetworkAccess).
        network_access: {
          oneOf: [
            { type: 'boolean' },
            {
              type: 'object',
              required: ['allow'],
              additionalProperties: false,
              properties: {
                allow: {
                  type: 'array',
                  minItems: 1,
                  maxItems: 100,
                  items: { type: 'string', maxLength: 260 },
                },
                methods: {
                  type: 'array',
                  minItems: 1,
                  maxItems: 20,
                  items: { type: 'string', maxLength: 40 },
                },
                max_requests: { type: 'integer', minimum: 1 },
                max_bytes: { type: 'integer', minimum: 1 },
                timeout_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 86_400 },
                allow_http: { type: 'boolean' },
              },
            },
          ],
        },
        allow_subprocesses: { type: 'boolean' },
        // Budgets of the task's tool calls (ADR 0044); the runtime checks them (checkTaskBudgets).
        budgets: {
          type: 'object',
          additionalProperties: false,
          properties: {
            max_calls: {
              type: 'integer',
              minimum: 0,
              description: "calls of all tools together (at most the service's maxTaskToolCalls; absent: it)",
            },
            max_cost: {
              type: 'number',
              minimum: 0,
              description: "the sum of the calls' costs (at most the service's maxTaskCost; absent: it)",
            },
            tools: {
              type: 'object',
              maxProperties: 1000,
              description: 'per tool ("namespace.name"): only tightens the budget the tool declares',
              additionalProperties: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  max_calls: { type: 'integer', minimum: 0 },
                  max_wall_seconds: { type: 'number', minimum: 0 },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

export interface TaskBody {
  code?: string;
  instruction?: string;
  language?: GuestLanguage;
  mode?: AgentMode;
  max_steps?: number;
  max_step_retries?: number;
  model?: string;
  answer_schema?: Record<string, unknown>;
  seed?: number;
  session_id?: string;
  tools?: string[];
  metadata?: Record<string, unknown>;
  priority?: number;
  max_retries?: number;
  deadline_seconds?: number;
  callback_url?: string;
  files?: { name: string; content_base64: string }[];
  tool_constraints?: {
    timeout_seconds?: number;
    cpu_seconds?: number;
    max_memory_mb?: number;
    allowed_libraries?: string[];
    blocked_commands?: string[];
    network_access?:
      | boolean
      | {
          allow: string[];
          methods?: string[];
          max_requests?: number;
          max_bytes?: number;
          timeout_seconds?: number;
          allow_http?: boolean;
        };
    allow_subprocesses?: boolean;
    budgets?: TaskBudgetsWire;
  };
}

export const MAX_BATCH = 1000;

export const batchBodySchema = {
  type: 'object',
  required: ['tasks'],
  additionalProperties: false,
  properties: {
    tasks: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: taskBodySchema },
    callback_url: { type: 'string', minLength: 1, maxLength: 2048 },
  },
} as const;

export interface BatchBody {
  tasks: TaskBody[];
  callback_url?: string;
}

export const pageQuery = {
  limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
  cursor: { type: 'string', maxLength: 512 },
} as const;
