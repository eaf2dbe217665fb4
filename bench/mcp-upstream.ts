// An upstream MCP server for bench/mcp-server.ts: N generated tools with typical schemas (a few described
// parameters, an annotation) and `echo`, which answers at once. stdio: `node --import tsx bench/mcp-upstream.ts N`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

const AREAS = ['issues', 'invoices', 'customers', 'orders', 'tickets', 'repos', 'calendars', 'files'];
const VERBS = ['list', 'get', 'create', 'update', 'archive', 'search', 'export', 'count'];

/** N tools named like a real server's (`issues_list_3`), each with a description and three described parameters. */
export function generatedTools(n: number): Tool[] {
  const tools: Tool[] = [
    {
      name: 'echo',
      description: 'Answers with its argument at once.',
      inputSchema: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
      annotations: { readOnlyHint: true },
    },
  ];
  for (let i = 0; tools.length < n; i++) {
    const area = AREAS[i % AREAS.length] ?? 'x';
    const verb = VERBS[Math.floor(i / AREAS.length) % VERBS.length] ?? 'x';
    tools.push({
      name: `${area}_${verb}_${i}`,
      description: `${verb[0]?.toUpperCase()}${verb.slice(1)} ${area} of the account, filtered by owner and status; pages of up to 100.`,
      inputSchema: {
        type: 'object',
        properties: {
          owner: { type: 'string', description: `Who owns the ${area} (login or email)` },
          status: { type: 'string', enum: ['open', 'closed', 'all'], description: 'Which ones' },
          limit: { type: 'integer', minimum: 1, maximum: 100, description: 'At most this many' },
        },
        required: ['owner'],
      },
      annotations: {
        readOnlyHint: verb === 'list' || verb === 'get' || verb === 'search' || verb === 'count',
      },
    });
  }
  return tools;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const tools = generatedTools(Number(process.argv[2] ?? 10));
  const server = new Server({ name: 'bench-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = request.params.arguments ?? {};
    return { content: [], structuredContent: { ok: true, i: args.i ?? null } };
  });
  await server.connect(new StdioServerTransport());
}
