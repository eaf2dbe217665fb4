import type { JsonSchema } from '../spec/index.ts';
import { GUEST_LANGUAGES } from '../spec/index.ts';
import { MAX_SEARCH_LIMIT } from './tool-catalog.ts';

/** The largest program an MCP call may carry (the runtime's own ceiling may be lower). */
export const MAX_CODE_CHARS = 1_000_000;
/** How long a call may wait for its task to pause or end before it answers with the task as it is. */
export const MAX_WAIT_SECONDS = 600;

const taskId: JsonSchema = { type: 'string', minLength: 1, maxLength: 128, description: 'The task id.' };
const waitSeconds = (what: string, byDefault: number): JsonSchema => ({
  type: 'number',
  minimum: 0,
  maximum: MAX_WAIT_SECONDS,
  description: `How long to wait for ${what} before answering with the task as it is (default ${byDefault}).`,
});
const reason: JsonSchema = {
  type: 'string',
  maxLength: 2000,
  description: 'Why (journaled with the decision).',
};

/** A program and what it runs with: execute's and submit_task's arguments. */
function programProperties(defaultWait: number): Record<string, JsonSchema> {
  return {
    code: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CODE_CHARS,
      description:
        'The program. JavaScript/TypeScript: the body of an async function (top-level await and return work; ' +
        'without a return, the last expression statement is the result). Python: a script whose last ' +
        'expression is the result. Tools are called as `await tools.NAME(args)` (Python: `tools.NAME(...)`).',
    },
    language: { type: 'string', enum: [...GUEST_LANGUAGES], description: 'Default javascript.' },
    timeout_seconds: { type: 'number', exclusiveMinimum: 0, description: 'Wall-clock limit of the program.' },
    cpu_seconds: { type: 'number', exclusiveMinimum: 0, description: 'CPU time limit of the program.' },
    memory_mb: { type: 'number', exclusiveMinimum: 0, description: 'Memory limit of the program, MiB.' },
    wait_seconds: waitSeconds('the task to pause or end', defaultWait),
  };
}

export interface ServerToolSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema & { type: 'object' };
  readonly annotations: {
    readonly readOnlyHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly idempotentHint?: boolean;
    readonly openWorldHint?: boolean;
  };
}

const object = (
  properties: Record<string, JsonSchema>,
  required: readonly string[] = [],
): JsonSchema & { type: 'object' } => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required: [...required] } : {}),
  additionalProperties: false,
});

/**
 * How long execute waits for its task by default: under the 60 s an SDK client waits for an answer by default (a
 * client that sends a progress token hears every few seconds and may wait longer); submit_task does not wait.
 */
export const EXECUTE_WAIT_SECONDS = 50;
/** How long approve/reject wait by default for the task to run on to its next pause or end. */
export const DECIDE_WAIT_SECONDS = 30;

/** The code-mode pair (ADR 0049). */
export const CODE_MODE_TOOLS: readonly ServerToolSpec[] = [
  {
    name: 'search_tools',
    title: 'Search the tools programs may call',
    description:
      'Finds the tools a program run by `execute` may call: their names, descriptions and TypeScript ' +
      'declarations (or Python stubs). An empty query lists them all, a page at a time.',
    inputSchema: object({
      query: { type: 'string', maxLength: 500, description: 'Words to look for; empty: every tool.' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, description: 'Tools per page (20).' },
      cursor: { type: 'string', maxLength: 20, description: 'The next_cursor of the previous page.' },
      language: {
        type: 'string',
        enum: ['typescript', 'python'],
        description: 'Declarations as TypeScript (default) or Python stubs.',
      },
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'execute',
    title: 'Run a program that calls tools',
    description:
      "Runs a JavaScript, TypeScript or Python program in codecall's sandbox as a durable task: its tool " +
      'calls are journaled, approvals are asked for, and it resumes where it stopped. Answers with the ' +
      "program's result, its logs and the files it left. A task that pauses (an approval, an input) is " +
      'answered with what it waits for and which tool to call next. Use search_tools first to see the tools.',
    inputSchema: object(programProperties(EXECUTE_WAIT_SECONDS), ['code']),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
];

/** The task surface: durable tasks driven from an MCP client. */
export const TASK_TOOLS: readonly ServerToolSpec[] = [
  {
    name: 'submit_task',
    title: 'Start a durable task',
    description:
      'Stores a program as a durable task and queues it; answers with the task (wait_seconds to wait for it). ' +
      'Follow it with get_task.',
    inputSchema: object(programProperties(0), ['code']),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'get_task',
    title: 'A task: its status, result, or what it waits for',
    description:
      'The task: its status and result, logs and files, or, paused, what it waits for and how to continue.',
    inputSchema: object({ task_id: taskId, wait_seconds: waitSeconds('the task to pause or end', 0) }, [
      'task_id',
    ]),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'list_pending_approvals',
    title: 'Tool calls waiting for approval',
    description:
      'The tool calls of paused tasks waiting for a decision (tool, exact arguments), oldest first, a page at a time.',
    inputSchema: object({
      limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Tasks per page (100).' },
      cursor: { type: 'string', maxLength: 200, description: 'The next_cursor of the previous page.' },
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  decisionTool('approve', 'Approve a tool call a task waits on', 'approves'),
  decisionTool('reject', 'Reject a tool call a task waits on', 'rejects'),
  {
    name: 'provide_input',
    title: 'Give a task the input it waits for',
    description:
      'Gives the value a paused task waits for (its program called input.wait(name)) and lets it run on; answers ' +
      `with the task once it pauses again or ends (wait_seconds, default ${DECIDE_WAIT_SECONDS}).`,
    inputSchema: object(
      {
        task_id: taskId,
        name: { type: 'string', minLength: 1, maxLength: 128, description: 'The input the task waits for.' },
        value: { description: 'The value (any JSON) the program gets from input.wait.' },
        wait_seconds: waitSeconds('the task to pause again or end', DECIDE_WAIT_SECONDS),
      },
      ['task_id', 'name', 'value'],
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'cancel',
    title: 'Cancel a task',
    description: 'Cancels a task that has not ended; a call running now is told to stop.',
    inputSchema: object({ task_id: taskId, reason }, ['task_id']),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
];

function decisionTool(name: 'approve' | 'reject', title: string, verb: string): ServerToolSpec {
  return {
    name,
    title,
    description:
      `${verb.charAt(0).toUpperCase()}${verb.slice(1)} the tool calls a paused task waits on (approval_id: one ` +
      'of them; none: every one pending) and lets it run on; answers with the task once it pauses again or ' +
      `ends (wait_seconds, default ${DECIDE_WAIT_SECONDS}).` +
      (name === 'reject' ? ' The program sees a rejected call as a TOOL_REJECTED error it may catch.' : ''),
    inputSchema: object(
      {
        task_id: taskId,
        approval_id: { type: 'string', minLength: 1, maxLength: 128, description: 'One request to decide.' },
        reason,
        wait_seconds: waitSeconds('the task to pause again or end', DECIDE_WAIT_SECONDS),
      },
      ['task_id'],
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  };
}
