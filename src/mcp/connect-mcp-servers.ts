import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { JsonSchema, ToolContext, ToolDefinition } from '../spec/index.ts';
import { DEFAULT_TOOL_NAMESPACE, SchemaValidator } from '../tools/index.ts';
import { checkMcpServers, DEFAULT_MCP_TIMEOUT_SECONDS } from './mcp-config.ts';
import type { McpServerConfig, McpToolOverride } from './mcp-config.ts';
import { effectFromAnnotations, mcpResultValue, memberNames } from './mcp-results.ts';

/**
 * The SDK, loaded on first use: importing it takes about half a second (its protocol schemas), which neither
 * `import 'codecall'` nor a command without MCP servers should pay.
 */
async function loadSdk() {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  };
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** What codecall tells MCP servers it is. */
const CLIENT_INFO = { name: 'codecall', version: '0.1.0' };

/** A server's tools list longer than this many pages is cut there (a server that pages forever). */
const MAX_PAGES = 100;

export interface ConnectMcpOptions {
  readonly servers: readonly McpServerConfig[];
  /** Aborts connecting (and listing); the servers connected by then are closed. */
  readonly signal?: AbortSignal;
}

/** One connected server as `McpServers` describes it. */
export interface McpServerInfo {
  readonly name: string;
  /** The transport: `stdio` or `http` (Streamable HTTP). */
  readonly transport: 'stdio' | 'http';
  /** The protocol version the server and codecall agreed on. */
  readonly protocolVersion: string | undefined;
  /** What the server says it is (`serverInfo`). */
  readonly serverName: string | undefined;
  readonly serverVersion: string | undefined;
  /** Its tools, as ToolDefinitions `tools.<name>.<tool>`. */
  readonly tools: readonly ToolDefinition[];
}

/** Connected MCP servers: their tools, to serve beside `defineTool` ones, until `close()`. */
export interface McpServers {
  /** Every server's tools, namespace `tools`, named `<server>.<tool>`, in configuration then listing order. */
  readonly tools: readonly ToolDefinition[];
  readonly servers: readonly McpServerInfo[];
  /** Closes every connection (a stdio server's process ends). */
  close(): Promise<void>;
}

interface Connected {
  readonly info: McpServerInfo;
  readonly link: Link;
}

/**
 * Connects to the servers (all at once), lists their tools (every page) and returns them as ToolDefinitions
 * whose `execute` calls the server (ADR 0047). One server that cannot be reached fails the whole (MCP_UNAVAILABLE
 * naming it), after closing the others.
 */
export async function connectMcpServers(options: ConnectMcpOptions): Promise<McpServers> {
  const servers = checkMcpServers(options.servers);
  const sdk = await loadSdk();
  const settled = await Promise.allSettled(servers.map((s) => connectOne(sdk, s, options.signal)));
  const connected = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const close = async () => {
    await Promise.allSettled(connected.map((c) => c.link.close()));
  };
  if (failed) {
    await close();
    throw failed.reason;
  }
  return {
    tools: connected.flatMap((c) => c.info.tools),
    servers: connected.map((c) => c.info),
    close,
  };
}

function transportOf(sdk: Sdk, server: McpServerConfig): Transport {
  if (server.url !== undefined) {
    return new sdk.StreamableHTTPClientTransport(new URL(server.url), {
      ...(server.headers ? { requestInit: { headers: { ...server.headers } } } : {}),
    });
  }
  return new sdk.StdioClientTransport({
    command: server.command ?? '',
    args: [...(server.args ?? [])],
    // Added to the SDK's few inherited variables (HOME, PATH, ...), never the whole environment.
    ...(server.env ? { env: withDefaultEnvironment(server.env) } : {}),
    ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
    stderr: 'inherit',
  });
}

/** The SDK replaces its default environment when given one: the defaults are kept, the server's added. */
function withDefaultEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const key of ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']) {
    const value = process.env[key];
    if (value !== undefined && !value.startsWith('()')) inherited[key] = value;
  }
  return { ...inherited, ...env };
}

/** A connected client and the protocol version it agreed on. */
async function openClient(
  sdk: Sdk,
  server: McpServerConfig,
  timeout: number,
  signal: AbortSignal | undefined,
): Promise<{ client: Client; protocolVersion: string | undefined }> {
  const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
  const transport = transportOf(sdk, server);
  // The client tells the transport the version it agreed on; the stdio transport does not keep it.
  let protocolVersion: string | undefined;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version: string) => {
    protocolVersion = version;
    setVersion?.(version);
  };
  try {
    signal?.throwIfAborted();
    await client.connect(transport, { timeout, ...(signal ? { signal } : {}) });
    return { client, protocolVersion };
  } catch (cause) {
    await client.close().catch(() => undefined);
    if (signal?.aborted) throw signal.reason;
    throw new CodecallError(
      'MCP_UNAVAILABLE',
      `MCP server ${server.name} (${server.url ?? server.command}): ${(cause as Error).message}`,
      { details: { server: server.name }, cause },
    );
  }
}

/** The first wait before connecting again to a server whose connection failed, doubled up to the longest. */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;

/**
 * A server's connection. When it ends (a stdio server exits, an HTTP server goes away), the next call connects
 * again; after a failed attempt, calls fail at once (MCP_UNAVAILABLE) until a wait of 1 s, doubling up to 30 s,
 * has passed. A call in flight when the connection ends fails with MCP_UNAVAILABLE: whether it ran is unknown.
 */
class Link {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private failures = 0;
  private retryAt = 0;
  private closed = false;

  constructor(
    private readonly sdk: Sdk,
    private readonly server: McpServerConfig,
    private readonly timeout: number,
    first: Client,
  ) {
    this.adopt(first);
  }

  private adopt(client: Client): void {
    this.client = client;
    client.onclose = () => {
      if (this.client === client) this.client = null;
    };
  }

  async get(): Promise<Client> {
    if (this.closed) {
      throw new CodecallError('MCP_UNAVAILABLE', `MCP server ${this.server.name} is closed`, {
        details: { server: this.server.name },
      });
    }
    if (this.client !== null) return this.client;
    const wait = this.retryAt - Date.now();
    if (wait > 0 && this.connecting === null) {
      throw new CodecallError(
        'MCP_UNAVAILABLE',
        `MCP server ${this.server.name} is not connected (next attempt in ${Math.ceil(wait / 1000)} s)`,
        { details: { server: this.server.name } },
      );
    }
    this.connecting ??= openClient(this.sdk, this.server, this.timeout, undefined)
      .then(
        ({ client }) => {
          this.failures = 0;
          if (this.closed) {
            void client.close();
            throw new CodecallError('MCP_UNAVAILABLE', `MCP server ${this.server.name} is closed`);
          }
          this.adopt(client);
          return client;
        },
        (e: unknown) => {
          this.failures += 1;
          this.retryAt =
            Date.now() + Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** (this.failures - 1));
          throw e;
        },
      )
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.close();
  }
}

async function connectOne(
  sdk: Sdk,
  server: McpServerConfig,
  signal: AbortSignal | undefined,
): Promise<Connected> {
  const timeout = (server.timeoutSeconds ?? DEFAULT_MCP_TIMEOUT_SECONDS) * 1000;
  const { client, protocolVersion } = await openClient(sdk, server, timeout, signal);
  try {
    const listed: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout,
        ...(signal ? { signal } : {}),
      });
      listed.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || cursor === '') break;
    }
    const link = new Link(sdk, server, timeout, client);
    const members = memberNames(listed.map((t) => t.name));
    const tools = listed.map((tool, i) =>
      toolDefinition(
        sdk,
        server,
        link,
        tool,
        members[i] as string,
        timeout,
        overrideOf(server, tool.name, members[i] as string),
      ),
    );
    return {
      link,
      info: {
        name: server.name,
        transport: server.url === undefined ? 'stdio' : 'http',
        protocolVersion,
        serverName: client.getServerVersion()?.name,
        serverVersion: client.getServerVersion()?.version,
        tools,
      },
    };
  } catch (cause) {
    await client.close().catch(() => undefined);
    if (signal?.aborted) throw signal.reason;
    throw new CodecallError(
      'MCP_UNAVAILABLE',
      `MCP server ${server.name} (${server.url ?? server.command}): listing its tools: ${(cause as Error).message}`,
      { details: { server: server.name }, cause },
    );
  }
}

/** The operator's word on a tool, by its MCP name or the name programs call it by. */
function overrideOf(server: McpServerConfig, mcpName: string, member: string): McpToolOverride {
  return server.tools?.[mcpName] ?? server.tools?.[member] ?? {};
}

function toolDefinition(
  sdk: Sdk,
  server: McpServerConfig,
  link: Link,
  tool: Tool,
  member: string,
  timeout: number,
  override: McpToolOverride,
): ToolDefinition {
  const where = { server: server.name, tool: tool.name };
  const inputSchema = usableSchema(tool.inputSchema) ?? { type: 'object' };
  const outputSchema = tool.outputSchema === undefined ? undefined : usableSchema(tool.outputSchema);
  const description = [
    tool.title ?? tool.annotations?.title,
    tool.description,
    member === tool.name ? undefined : `(MCP tool "${tool.name}" of server ${server.name})`,
  ]
    .filter((part): part is string => typeof part === 'string' && part.trim() !== '')
    .join('\n');
  return Object.freeze({
    namespace: DEFAULT_TOOL_NAMESPACE,
    name: `${server.name}.${member}`,
    description,
    inputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema }),
    effect: override.effect ?? effectFromAnnotations(tool.annotations),
    requiresApproval: override.requiresApproval ?? false,
    async execute(args: unknown, ctx: ToolContext): Promise<unknown> {
      let result: Awaited<ReturnType<Client['callTool']>>;
      // The SDK never takes its abort listener off the signal it is given: a signal of the call's own, linked
      // to the caller's for the call's time, keeps a long task's signal from gathering one per call.
      const call = new AbortController();
      const forward = (): void => call.abort(ctx.signal.reason);
      if (ctx.signal.aborted) forward();
      else ctx.signal.addEventListener('abort', forward, { once: true });
      try {
        const client = await link.get();
        result = await client.callTool(
          { name: tool.name, arguments: (args ?? {}) as Record<string, unknown> },
          undefined,
          { signal: call.signal, timeout },
        );
      } catch (cause) {
        throw callFailure(sdk, cause, ctx.signal, where);
      } finally {
        ctx.signal.removeEventListener('abort', forward);
      }
      return mcpResultValue(result, where);
    },
  });
}

/** A call that did not get a result: the abort's own reason, a lost connection, or the server's refusal. */
function callFailure(
  sdk: Sdk,
  cause: unknown,
  signal: AbortSignal,
  where: { server: string; tool: string },
): unknown {
  if (signal.aborted) return signal.reason;
  if (isCodecallError(cause)) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (cause instanceof sdk.McpError && cause.code !== (sdk.ErrorCode.ConnectionClosed as number)) {
    return new CodecallError('MCP_TOOL_ERROR', message, {
      details: { ...where, mcp_code: cause.code },
      cause,
    });
  }
  return new CodecallError('MCP_UNAVAILABLE', `MCP server ${where.server}: ${message}`, {
    details: where,
    cause,
  });
}

/**
 * A server's schema as codecall's validator takes it (no `$schema`, which names drafts it may not know), or
 * undefined when it does not compile: the server checks its own arguments then.
 */
function usableSchema(schema: unknown): JsonSchema | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  const { $schema: _drop, ...rest } = schema as Record<string, unknown>;
  try {
    SchemaValidator.shared.compile(rest);
    return rest;
  } catch {
    return undefined;
  }
}
