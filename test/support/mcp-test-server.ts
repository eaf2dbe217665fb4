// A real MCP server for the tests, written with the SDK: tools with annotations, structured output, text, an
// image, an erroring one, names that are not identifiers, listed over two pages. Each call appends a line
// `<tool> <json args>` to the file named by MCP_CALL_LOG (so tests count what reached the server).
//
// As a stdio server: `node --import tsx test/support/mcp-test-server.ts`. In-process over Streamable HTTP:
// `startMcpHttpServer()`.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
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

const PAGE = 4;
let issues = 0;

function logCall(name: string, args: unknown): void {
  const file = process.env.MCP_CALL_LOG;
  if (file) appendFileSync(file, `${name} ${JSON.stringify(args ?? {})}\n`);
}

function call(
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> | CallToolResult {
  logCall(name, args);
  switch (name) {
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

export function makeTestServer(): Server {
  const server = new Server(
    { name: 'codecall-test-server', version: '1.2.3' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const all = process.env.MCP_EXTRA_TOOLS === '1' ? [...TEST_TOOLS, SLOW, EXIT] : TEST_TOOLS;
    const start = Number(request.params?.cursor ?? 0);
    const tools = all.slice(start, start + PAGE);
    const next = start + PAGE < all.length ? String(start + PAGE) : undefined;
    return { tools, ...(next === undefined ? {} : { nextCursor: next }) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    call(request.params.name, request.params.arguments ?? {}, extra.signal),
  );
  return server;
}

/** A stateless Streamable HTTP server on a loopback port; `headers` are the requests' headers, last first. */
export async function startMcpHttpServer(): Promise<{
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
      const server = makeTestServer();
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
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
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
  await makeTestServer().connect(new StdioServerTransport());
}
