// A real MCP server for the tests, written with the SDK: tools with annotations, structured output, text, an
// image, an erroring one, names that are not identifiers, listed over two pages. Each call appends a line
// `<tool> <json args>` to the file named by MCP_CALL_LOG (so tests count what reached the server).
//
// As a stdio server: `node --import tsx test/support/mcp-test-server.ts`. In-process over Streamable HTTP:
// `startMcpHttpServer()`.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

/** A 1x1 transparent PNG. */
export const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

export const TEST_TOOLS: Tool[] = [
  {
    name: 'search',
    title: 'Search the catalogue',
    description: 'Finds items whose name contains q.',
    inputSchema: {
      type: 'object',
      properties: { q: { type: 'string', description: 'what to look for' }, limit: { type: 'integer' } },
      required: ['q'],
    },
    outputSchema: {
      type: 'object',
      properties: { hits: { type: 'array', items: { type: 'string' } }, total: { type: 'integer' } },
      required: ['hits', 'total'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'create-issue',
    description: 'Opens an issue.',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    annotations: { destructiveHint: false },
  },
  {
    name: 'labels.set',
    description: 'Sets the labels of an issue.',
    inputSchema: {
      type: 'object',
      properties: { issue: { type: 'integer' }, labels: { type: 'array', items: { type: 'string' } } },
      required: ['issue', 'labels'],
    },
    annotations: { idempotentHint: true, destructiveHint: true },
  },
  {
    name: 'screenshot',
    description: 'A picture of the page.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'fail',
    description: 'Always fails.',
    inputSchema: { type: 'object', properties: { why: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'echo',
    description: 'Says it back, twice.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

/** With MCP_EXTRA_TOOLS=1: a tool that waits until it is cancelled (it logs `cancelled slow` then). */
const SLOW: Tool = {
  name: 'slow',
  description: 'Waits for a minute, or until the call is cancelled.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
};

/** With MCP_EXTRA_TOOLS=1: a tool whose call ends the server's process (it never answers). */
const EXIT: Tool = {
  name: 'exit',
  description: 'Ends the server.',
  inputSchema: { type: 'object', properties: {} },
};

/** With MCP_EXTRA_TOOLS=1: reports progress `steps` times, `gapMs` apart, then answers `done`. */
const PROGRESS: Tool = {
  name: 'progress',
  description: 'Works for a while, reporting progress.',
  inputSchema: {
    type: 'object',
    properties: { steps: { type: 'integer' }, gapMs: { type: 'integer' } },
    required: ['steps', 'gapMs'],
  },
  annotations: { readOnlyHint: true },
};

/** With MCP_EXTRA_TOOLS=1: asks the client whether to deploy (elicitation), and says what it was told. */
const CONFIRM: Tool = {
  name: 'confirm',
  description: 'Deploys after asking.',
  inputSchema: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
  annotations: { idempotentHint: true },
};

/** With MCP_EXTRA_TOOLS=1: adds the tool `late` to the list and says the list changed. */
const ADD_TOOL: Tool = {
  name: 'add_tool',
  description: 'Adds a tool.',
  inputSchema: { type: 'object', properties: {} },
};

const LATE: Tool = {
  name: 'late',
  description: 'A tool added while the server ran.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
};

let lateAdded = false;

/** The schema `confirm` asks its answer in. */
export const CONFIRM_SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean', description: 'deploy?' } },
  required: ['ok'],
} as const;

const PAGE = 4;
let issues = 0;

function logCall(name: string, args: unknown): void {
  const file = process.env.MCP_CALL_LOG;
  if (file) appendFileSync(file, `${name} ${JSON.stringify(args ?? {})}\n`);
}

type Extra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

async function progress(args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
  const token = extra._meta?.progressToken;
  const steps = Number(args.steps);
  extra.signal.addEventListener('abort', () => logCall('cancelled', { tool: 'progress' }));
  for (let i = 1; i <= steps; i++) {
    await new Promise((resolve) => setTimeout(resolve, Number(args.gapMs)));
    if (extra.signal.aborted) return { content: [] };
    if (token !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
      });
    }
  }
  return { content: [{ type: 'text', text: 'done' }] };
}

async function confirm(args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
  const target = String(args.target);
  extra.signal.addEventListener('abort', () => logCall('cancelled', { tool: 'confirm' }));
  try {
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: { message: `Deploy ${target}?`, requestedSchema: CONFIRM_SCHEMA },
      },
      ElicitResultSchema,
    );
    logCall('elicited', answer);
    const ok = answer.action === 'accept' && answer.content?.ok === true;
    return {
      content: [{ type: 'text', text: `${ok ? 'deployed' : 'not deployed'} ${target} (${answer.action})` }],
    };
  } catch (e) {
    logCall('elicitation-failed', { message: (e as Error).message });
    return { isError: true, content: [{ type: 'text', text: (e as Error).message }] };
  }
}

function call(
  name: string,
  args: Record<string, unknown>,
  extra: Extra,
  server: Server,
): Promise<CallToolResult> | CallToolResult {
  const signal = extra.signal;
  logCall(name, args);
  switch (name) {
    case 'progress':
      return progress(args, extra);
    case 'confirm':
      return confirm(args, extra);
    case 'add_tool':
      lateAdded = true;
      return server.sendToolListChanged().then(() => ({ content: [{ type: 'text', text: 'added' }] }));
    case 'late':
      return { content: [{ type: 'text', text: 'late' }] };
    case 'exit':
      process.exit(3);
    case 'slow':
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ content: [{ type: 'text', text: 'slept' }] }), 60_000);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          logCall('cancelled', { tool: 'slow' });
          resolve({ content: [] });
        });
      });
    case 'search': {
      const q = String(args.q);
      const hits = ['apple', 'apricot', 'banana'].filter((x) => x.includes(q));
      const limited = typeof args.limit === 'number' ? hits.slice(0, args.limit) : hits;
      return {
        content: [{ type: 'text', text: JSON.stringify({ hits: limited, total: hits.length }) }],
        structuredContent: { hits: limited, total: hits.length },
      };
    }
    case 'create-issue':
      issues += 1;
      return { content: [{ type: 'text', text: `created issue #${issues}: ${String(args.title)}` }] };
    case 'labels.set':
      return { content: [] };
    case 'screenshot':
      return {
        content: [
          { type: 'image', mimeType: 'image/png', data: PIXEL_PNG, annotations: { audience: ['user'] } },
        ],
      };
    case 'fail':
      return {
        isError: true,
        content: [
          { type: 'text', text: `it failed: ${typeof args.why === 'string' ? args.why : 'no reason'}` },
        ],
      };
    case 'echo':
      return {
        content: [
          { type: 'text', text: String(args.text) },
          { type: 'text', text: String(args.text) },
        ],
      };
    default:
      throw new Error(`unknown tool ${name}`);
  }
}

export function makeTestServer(options: { extraTools?: boolean } = {}): Server {
  const server = new Server(
    { name: 'codecall-test-server', version: '1.2.3' },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const extra = [SLOW, EXIT, PROGRESS, CONFIRM, ADD_TOOL, ...(lateAdded ? [LATE] : [])];
    const withExtra = options.extraTools ?? process.env.MCP_EXTRA_TOOLS === '1';
    const all = withExtra ? [...TEST_TOOLS, ...extra] : TEST_TOOLS;
    const start = Number(request.params?.cursor ?? 0);
    const tools = all.slice(start, start + PAGE);
    const next = start + PAGE < all.length ? String(start + PAGE) : undefined;
    return { tools, ...(next === undefined ? {} : { nextCursor: next }) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    call(request.params.name, request.params.arguments ?? {}, extra, server),
  );
  return server;
}

/** A stateless Streamable HTTP server on a loopback port; `headers` are the requests' headers, last first. */
export async function startMcpHttpServer(options: { extraTools?: boolean; port?: number } = {}): Promise<{
  url: string;
  headers: Record<string, string | string[] | undefined>[];
  close(): Promise<void>;
}> {
  const headers: Record<string, string | string[] | undefined>[] = [];
  const http = createServer((req, res) => {
    headers.unshift(req.headers);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const server = makeTestServer(options);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      void server
        .connect(transport)
        .then(() => transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text)));
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // MCP_DOWN_FILE: while that file exists the server will not start (a server that is down and comes back).
  const down = process.env.MCP_DOWN_FILE;
  if (down && existsSync(down)) process.exit(4);
  if (process.env.MCP_PID_FILE) writeFileSync(process.env.MCP_PID_FILE, String(process.pid));
  await makeTestServer().connect(new StdioServerTransport());
}
