import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Runtime } from '../api/index.ts';
import { createCodecallMcpServer, runtimeTaskBackend } from '../mcpserver/index.ts';
import type { TaskStore, ToolDefinition } from '../spec/index.ts';
import { sendError } from './error-reply.ts';
import { chargeWhenAnswered } from './request-share-hook.ts';

const loadTransport = () => import('@modelcontextprotocol/sdk/server/streamableHttp.js');

export interface McpRouteOptions {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  /** The tools now (a list that changes, an MCP server's, is read per request). */
  readonly tools: () => readonly ToolDefinition[];
}

/**
 * The MCP endpoint (ADR 0049): Streamable HTTP at /mcp, stateless. Each POST is one JSON-RPC exchange answered
 * (as an event stream) by a server made for the caller (the key's tenant and actor), so `execute` and `submit_task` are that
 * tenant's tasks on the service's queue. The API's keys, origin checks and request share hold as for /api/v1
 * (the auth hook guards /mcp). No session means no server-initiated stream: GET and DELETE are 405.
 */
export function registerMcpRoute(app: FastifyInstance, options: McpRouteOptions): void {
  const { runtime, store, tools } = options;
  // Loaded with the first request: `codecall serve` does not pay the SDK's import unless MCP is used.
  let transportModule: ReturnType<typeof loadTransport> | undefined;
  app.post('/mcp', async (request: FastifyRequest, reply: FastifyReply) => {
    transportModule ??= loadTransport();
    const { StreamableHTTPServerTransport } = await transportModule;
    const server = await createCodecallMcpServer({
      tools: tools(),
      tasks: runtimeTaskBackend({ runtime, store, principal: request.principal }),
    });
    // Answered as an event stream: a long wait sends progress notifications before the result.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    // The transport answers on the raw response; fastify's reply is done with. Its tenant's request share is
    // charged when that response ends, as other requests are when their answer is sent (ADR 0039).
    chargeWhenAnswered(request, reply);
    reply.hijack();
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  const notHere = (request: FastifyRequest, reply: FastifyReply) =>
    sendError(
      reply.header('allow', 'POST'),
      405,
      'METHOD_NOT_ALLOWED',
      `${request.method} /mcp: this endpoint is stateless (no sessions, no server stream); POST JSON-RPC to it`,
    );
  app.get('/mcp', notHere);
  app.delete('/mcp', notHere);
}
