import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TaskView } from '../api/index.ts';
import { artifactType } from './task-resources.ts';

/** The URI of a task's artifact as a resource (ADR 0049). */
export function artifactUri(taskId: string, name: string): string {
  return `codecall://tasks/${encodeURIComponent(taskId)}/artifacts/${encodeURIComponent(name)}`;
}

/** The URI of a task's journal as a resource. */
export function journalUri(taskId: string): string {
  return `codecall://tasks/${encodeURIComponent(taskId)}/journal`;
}

/** A call the client makes next to take a paused (or unfinished) task on. */
export interface NextCall {
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly what: string;
}

/** How results are told: whether this server serves the task surface (the calls that take a task on). */
export interface ResultOptions {
  readonly taskTools: boolean;
}

/** What the client may call next for this task: none once it has ended, or without the task surface. */
export function nextCalls(view: TaskView, options: ResultOptions): NextCall[] {
  if (!options.taskTools) return [];
  const task_id = view.task_id;
  switch (view.status) {
    case 'pending':
    case 'running':
      return [
        { tool: 'get_task', arguments: { task_id, wait_seconds: 30 }, what: 'wait for it' },
        { tool: 'cancel', arguments: { task_id }, what: 'stop it' },
      ];
    case 'paused':
      break;
    default:
      return [];
  }
  if (view.pause_reason === 'approval_required' && view.pending_approvals.length > 0) {
    return view.pending_approvals.flatMap((a) => [
      {
        tool: 'approve',
        arguments: { task_id, approval_id: a.id },
        what: `let ${a.tool} run with these arguments`,
      },
      {
        tool: 'reject',
        arguments: { task_id, approval_id: a.id, reason: 'WHY' },
        what: `refuse it (the program sees TOOL_REJECTED)`,
      },
    ]);
  }
  if (view.pause_reason === 'awaiting_input' && view.pending_inputs.length > 0) {
    return [
      ...view.pending_inputs.map((i) => ({
        tool: 'provide_input',
        arguments: { task_id, name: i.name, value: 'JSON' },
        what: `give "${i.name}" (any JSON value) and run it on`,
      })),
      { tool: 'cancel', arguments: { task_id }, what: 'stop it' },
    ];
  }
  // Other pauses (attention, a request) are taken on by the HTTP API or the CLI; cancel works here.
  return [{ tool: 'cancel', arguments: { task_id }, what: 'stop it' }];
}

/** The task as MCP structured content: what a client acts on (snake_case, as the HTTP API says it). */
export function taskContent(view: TaskView, options: ResultOptions): Record<string, unknown> {
  return {
    task_id: view.task_id,
    status: view.status,
    ...(view.pause_reason === null ? {} : { pause_reason: view.pause_reason }),
    ...(view.status === 'succeeded' ? { result: view.result?.output ?? null } : {}),
    logs: (view.result?.execution_log ?? []).map((l) => ({ level: l.level, message: l.message })),
    ...(view.error === null ? {} : { error: view.error }),
    artifacts: view.artifacts.map((a) => ({ ...a, uri: artifactUri(view.task_id, a.name) })),
    ...(view.pending_approvals.length > 0 ? { pending_approvals: view.pending_approvals } : {}),
    ...(view.pending_inputs.length > 0 ? { pending_inputs: view.pending_inputs } : {}),
    ...(view.attention_calls.length > 0 ? { attention_calls: view.attention_calls } : {}),
    ...(view.result === null ? {} : { resources_used: view.result.resources_used }),
    next: nextCalls(view, options),
  };
}

function jsonText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'null');
}

/** The lines a model reads: the result or failure, what it waits for and which tool to call, logs, files. */
function summary(view: TaskView, options: ResultOptions): string {
  const lines: string[] = [];
  switch (view.status) {
    case 'succeeded':
      lines.push(jsonText(view.result?.output ?? null));
      break;
    case 'failed':
    case 'cancelled': {
      const e = view.error;
      const where = e?.line === undefined ? '' : ` (line ${e.line})`;
      lines.push(`task ${view.task_id} ${view.status}: ${e ? `${e.code}: ${e.message}${where}` : ''}`);
      break;
    }
    case 'paused':
      lines.push(`task ${view.task_id} paused (${view.pause_reason ?? 'unknown'})`);
      for (const a of view.pending_approvals) {
        lines.push(`waits for approval ${a.id}: ${a.tool}(${JSON.stringify(a.arguments)})`);
      }
      for (const i of view.pending_inputs) lines.push(`waits for input "${i.name}"`);
      for (const c of view.attention_calls) {
        lines.push(`needs a human: ${c.tool}(${JSON.stringify(c.arguments)}) may or may not have run`);
      }
      break;
    default:
      lines.push(`task ${view.task_id} is ${view.status}`);
  }
  const next = nextCalls(view, options);
  if (next.length > 0) {
    lines.push('to continue, call one of:');
    for (const n of next) lines.push(`  ${n.tool} ${JSON.stringify(n.arguments)}   (${n.what})`);
  } else if (
    !options.taskTools &&
    (view.status === 'paused' || view.status === 'pending' || view.status === 'running')
  ) {
    lines.push('this server has no task tools: take it on with `codecall tasks` or the HTTP API');
  }
  const logs = view.result?.execution_log ?? [];
  if (logs.length > 0) {
    lines.push('logs:');
    for (const l of logs) lines.push(`${l.level === 'log' ? '' : `[${l.level}] `}${l.message}`);
  }
  for (const a of view.artifacts) {
    lines.push(`file ${a.name} (${a.size} bytes): ${artifactUri(view.task_id, a.name)}`);
  }
  return lines.join('\n');
}

/**
 * A task as a tool's result (ADR 0049): a failed or cancelled one is `isError` (its code and message), a paused
 * or unfinished one a normal result that names the calls that take it on.
 */
export function taskResult(view: TaskView, options: ResultOptions): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary(view, options) },
      // Each file the program left, as a link the client reads (resources/read) when it wants it.
      ...view.artifacts.map((a) => ({
        type: 'resource_link' as const,
        uri: artifactUri(view.task_id, a.name),
        name: a.name,
        mimeType: artifactType(a.name).mimeType,
        size: a.size,
      })),
    ],
    structuredContent: taskContent(view, options),
    ...(view.status === 'failed' || view.status === 'cancelled' ? { isError: true } : {}),
  };
}

/** A refused call (bad arguments, an unknown task, a decision not allowed): `isError` with the stable code. */
export function errorResult(
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): CallToolResult {
  return {
    content: [{ type: 'text', text: `${code}: ${message}` }],
    structuredContent: { error: { code, message, details } },
    isError: true,
  };
}
