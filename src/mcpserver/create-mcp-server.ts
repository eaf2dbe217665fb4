import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SubmitInput, TaskView } from '../api/index.ts';
import { isCodecallError } from '../errors/index.ts';
import type { ExecutionLimits, GuestLanguage, ToolDefinition } from '../spec/index.ts';
import { SchemaValidator } from '../tools/index.ts';
import { errorResult, taskResult as resultOfTask } from './task-results.ts';
import type { TaskBackend } from './task-backend.ts';
import { ToolCatalog } from './tool-catalog.ts';
import { RESOURCE_TEMPLATES, readTaskResource } from './task-resources.ts';
import { CODE_MODE_TOOLS, DECIDE_WAIT_SECONDS, EXECUTE_WAIT_SECONDS, TASK_TOOLS } from './server-tools.ts';

/** The SDK's server side, loaded on first use (importing it costs about half a second; ADR 0047). */
async function loadServerSdk() {
  const [server, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server: server.Server, types };
}

export interface CodecallMcpServerOptions {
  /** The tools programs may call: search_tools searches them, execute's programs call them. */
  readonly tools: readonly ToolDefinition[];
  /** Where programs run, as durable tasks of the caller. */
  readonly tasks: TaskBackend;
  /** Limits every program gets unless its call says otherwise (the runtime's ceilings still hold). */
  readonly limits?: Partial<ExecutionLimits>;
  /** Serve the task surface (submit_task, get_task, approvals, cancel) besides the code-mode pair; default true. */
  readonly taskTools?: boolean;
  /** Metadata every task it submits carries (who submitted it through MCP). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly version?: string;
}

/** MCP's JSON-RPC error code for a resource that is not there. */
const RESOURCE_NOT_FOUND = -32002;

/** What codecall tells MCP clients it is, and how to use it. */
const SERVER_NAME = 'codecall';
const INSTRUCTIONS =
  'codecall runs programs that call tools, durably. Find tools with search_tools, then write one program that ' +
  'calls them (`await tools.NAME(args)`) and run it with execute: loops, filtering and joins happen in the ' +
  'program, only its result comes back. A task that pauses for an approval says which tool to call next.';

// A catalog per tools list: declarations are rendered once, not per session (the service makes a server per request).
const catalogs = new WeakMap<readonly ToolDefinition[], ToolCatalog>();

function catalogOf(tools: readonly ToolDefinition[]): ToolCatalog {
  let catalog = catalogs.get(tools);
  if (!catalog) {
    catalog = new ToolCatalog(tools);
    catalogs.set(tools, catalog);
  }
  return catalog;
}

/**
 * codecall as an MCP server (ADR 0049): the code-mode pair (`search_tools`, `execute`) and the task surface, over
 * a TaskBackend. Returns the SDK's server, not yet connected: `await server.connect(transport)` (stdio, or
 * Streamable HTTP), `server.close()`.
 */
export async function createCodecallMcpServer(options: CodecallMcpServerOptions): Promise<Server> {
  const { Server: SdkServer, types } = await loadServerSdk();
  const catalog = catalogOf(options.tools);
  const specs = [...CODE_MODE_TOOLS, ...(options.taskTools === false ? [] : TASK_TOOLS)];
  const byName = new Map(specs.map((s) => [s.name, s]));
  const server = new SdkServer(
    { name: SERVER_NAME, version: options.version ?? '0.1.0' },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: INSTRUCTIONS,
    },
  );
  // Tasks' journals and files as resources: no list (tasks come and go), two templates, read by URI.
  server.setRequestHandler(types.ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(types.ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES.map((t) => ({ ...t })),
  }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
    try {
      return await readTaskResource(options.tasks, request.params.uri);
    } catch (e) {
      if (!isCodecallError(e)) throw e;
      // -32002 is MCP's "resource not found"; the stable code rides in the error's data.
      const code = e.code === 'NOT_FOUND' ? RESOURCE_NOT_FOUND : types.ErrorCode.InvalidParams;
      throw new types.McpError(code, e.message, { code: e.code, details: e.details });
    }
  });
  server.setRequestHandler(types.ListToolsRequestSchema, () => ({
    tools: specs.map((s) => ({
      name: s.name,
      title: s.title,
      description: s.description,
      inputSchema: s.inputSchema,
      annotations: { title: s.title, ...s.annotations },
    })),
  }));
  const calls = toolCalls(options, catalog, options.taskTools !== false);
  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const spec = byName.get(name);
    if (!spec) {
      throw new types.McpError(
        types.ErrorCode.InvalidParams,
        `no tool ${JSON.stringify(name.slice(0, 100))}: ${[...byName.keys()].join(', ')}`,
      );
    }
    const args = request.params.arguments ?? {};
    const violation = SchemaValidator.shared.validate(spec.inputSchema, args);
    if (violation) {
      // A tool execution error, not a protocol one: the model reads it and fixes its call (MCP 2025-11-25).
      const field = violation.field || 'arguments';
      return errorResult('INVALID_ARGUMENT', `${name}: ${field}: ${violation.message}`, { field });
    }
    try {
      const handler = calls[spec.name];
      if (!handler) throw new Error(`no handler for ${spec.name}`);
      // A client that gave a progress token hears from a long wait (and may keep its request timeout from running out).
      const token = request.params._meta?.progressToken;
      const progress =
        token === undefined
          ? undefined
          : (n: number, message: string) =>
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress: n, message },
                })
                .catch(() => undefined);
      return await handler(args, { signal: extra.signal, ...(progress ? { progress } : {}) });
    } catch (e) {
      if (isCodecallError(e)) return errorResult(e.code, e.message, e.details);
      return errorResult('INTERNAL', `${name}: ${(e as Error).message}`);
    }
  });
  return server;
}

/** Arguments as the schema checked them. */
type Args = Readonly<Record<string, unknown>>;

/** One call's context: its abort (the client's cancel, the connection's end) and, given a token, its progress. */
interface Call {
  readonly signal: AbortSignal;
  readonly progress?: (n: number, message: string) => void;
}

type Handler = (args: Args, call: Call) => Promise<CallToolResult>;

/** How often a waiting call tells a client with a progress token that it still waits. */
export const PROGRESS_EVERY_MS = 3_000;

function toolCalls(
  options: CodecallMcpServerOptions,
  catalog: ToolCatalog,
  taskTools: boolean,
): Record<string, Handler> {
  const { tasks } = options;
  const taskResult = (view: TaskView) => resultOfTask(view, { taskTools });
  /** The task once it settles, waiting at most `seconds` (and not past the request's own end). */
  const settled = async (taskId: string, seconds: number, call: Call) => {
    if (seconds <= 0) return tasks.get(taskId);
    const started = Date.now();
    let beats = 0;
    const timer =
      call.progress &&
      setInterval(() => {
        beats += 1;
        call.progress?.(beats, `task ${taskId}: waiting ${Math.round((Date.now() - started) / 1000)} s`);
      }, PROGRESS_EVERY_MS);
    try {
      return await tasks.settle(taskId, AbortSignal.any([call.signal, AbortSignal.timeout(seconds * 1000)]));
    } finally {
      clearInterval(timer);
    }
  };
  const submit = async (args: Args, defaultWait: number, call: Call) => {
    const view = await tasks.submit(submitInput(args, options));
    return taskResult(await settled(view.task_id, waitOf(args, defaultWait), call));
  };
  const decide = (decision: 'approve' | 'reject') => async (args: Args, call: Call) => {
    const taskId = args.task_id as string;
    const ids = typeof args.approval_id === 'string' ? [args.approval_id] : undefined;
    const view = await tasks.decide(taskId, decision, ids, args.reason as string | undefined);
    // The decision lets the task run on: answer with where it gets to (its next pause or its end).
    return taskResult(
      view.status === 'paused' && view.pending_approvals.length > 0
        ? view
        : await settled(taskId, waitOf(args, DECIDE_WAIT_SECONDS), call),
    );
  };
  return {
    search_tools: async (args) => {
      const page = catalog.search(args);
      const text =
        page.tools.length === 0
          ? catalog.size === 0
            ? 'no tools are configured'
            : `no tool matches ${JSON.stringify(args.query ?? '')}; an empty query lists every one`
          : `${page.declarations}\n\n${page.total === 1 ? '1 tool matches' : `${page.total} tools match`}${page.next_cursor === null ? '' : `; next page: cursor ${JSON.stringify(page.next_cursor)}`}`;
      return Promise.resolve({
        content: [{ type: 'text', text }],
        structuredContent: {
          tools: page.tools,
          total: page.total,
          next_cursor: page.next_cursor,
        },
      });
    },
    execute: (args, call) => submit(args, EXECUTE_WAIT_SECONDS, call),
    submit_task: (args, call) => submit(args, 0, call),
    get_task: async (args, call) => taskResult(await settled(args.task_id as string, waitOf(args, 0), call)),
    list_pending_approvals: async (args) => {
      const inbox = await tasks.approvals({
        ...(typeof args.limit === 'number' ? { limit: args.limit } : {}),
        ...(typeof args.cursor === 'string' ? { cursor: args.cursor } : {}),
      });
      const lines = inbox.approvals.map(
        (a) => `task ${a.task_id} approval ${a.approval_id}: ${a.tool}(${JSON.stringify(a.arguments)})`,
      );
      return {
        content: [{ type: 'text', text: lines.length === 0 ? 'no approvals are pending' : lines.join('\n') }],
        structuredContent: { ...inbox },
      };
    },
    provide_input: async (args, call) => {
      const taskId = args.task_id as string;
      await tasks.provideInput(taskId, args.name as string, args.value);
      return taskResult(await settled(taskId, waitOf(args, DECIDE_WAIT_SECONDS), call));
    },
    approve: decide('approve'),
    reject: decide('reject'),
    cancel: async (args) =>
      taskResult(await tasks.cancel(args.task_id as string, args.reason as string | undefined)),
  };
}

function waitOf(args: Args, byDefault: number): number {
  return typeof args.wait_seconds === 'number' ? args.wait_seconds : byDefault;
}

/** execute's and submit_task's arguments as a task. */
function submitInput(args: Args, options: CodecallMcpServerOptions): SubmitInput {
  const limits: Partial<ExecutionLimits> = { ...options.limits };
  if (typeof args.timeout_seconds === 'number') limits.timeoutMs = Math.ceil(args.timeout_seconds * 1000);
  if (typeof args.cpu_seconds === 'number') limits.cpuMs = Math.ceil(args.cpu_seconds * 1000);
  if (typeof args.memory_mb === 'number') limits.memoryBytes = Math.ceil(args.memory_mb * 1024 * 1024);
  return {
    code: args.code as string,
    language: (args.language as GuestLanguage | undefined) ?? 'javascript',
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(options.metadata && Object.keys(options.metadata).length > 0 ? { metadata: options.metadata } : {}),
  };
}
