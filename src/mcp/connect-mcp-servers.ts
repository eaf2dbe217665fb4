import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { JsonSchema, ToolContext, ToolDefinition, ToolUnreachable } from '../spec/index.ts';
import { DEFAULT_TOOL_NAMESPACE, SchemaValidator } from '../tools/index.ts';
import { checkMcpServers, DEFAULT_MCP_MAX_CALL_SECONDS, DEFAULT_MCP_TIMEOUT_SECONDS } from './mcp-config.ts';
import type { McpServerConfig, McpToolOverride } from './mcp-config.ts';
import { CallWatch } from './mcp-call-watch.ts';
import { Link, loadSdk, openClient, unavailable } from './mcp-connection.ts';
import type { McpConnectionEvents, McpTarget, Sdk } from './mcp-connection.ts';
import { answerElicitation } from './mcp-elicitation.ts';
import type { ElicitingCall } from './mcp-elicitation.ts';
import { effectFromAnnotations, mcpResultValue, memberNames } from './mcp-results.ts';
import { mcpRedactor, resolveMcpSecrets } from './mcp-secrets.ts';
import type { McpEnvironment } from './mcp-secrets.ts';

/** The least time between two listings of a server's tools after it said they changed. */
const RELIST_GAP_MS = 1_000;

/** A server's tools list longer than this many pages is cut there (a server that pages forever). */
const MAX_PAGES = 100;

export interface ConnectMcpOptions {
  readonly servers: readonly McpServerConfig[];
  /** Aborts connecting (and listing); the servers connected by then are closed. */
  readonly signal?: AbortSignal;
  /**
   * Where `{{env:NAME}}` in servers' `headers` and `env` values is read (default `process.env`); a variable that
   * is not set is INVALID_CONFIG before any server is started.
   */
  readonly environment?: McpEnvironment;
  /**
   * A server said its tools changed (`notifications/tools/list_changed`) and they were listed again: `tools`
   * (and the server's `tools`) now hold the new list, for the tasks created from here (ADR 0047).
   */
  readonly onToolsChanged?: (server: string) => void;
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
  /** Its tools, as ToolDefinitions `tools.<name>.<tool>` (the latest list, when the server says it changed). */
  readonly tools: readonly ToolDefinition[];
}

/** Connected MCP servers: their tools, to serve beside `defineTool` ones, until `close()`. */
export interface McpServers {
  /**
   * Every server's tools, namespace `tools`, named `<server>.<tool>`, in configuration then listing order: the
   * latest lists (read again when a server says they changed); a registry made from them keeps its own.
   */
  readonly tools: readonly ToolDefinition[];
  readonly servers: readonly McpServerInfo[];
  /** Closes every connection (a stdio server's process ends). */
  close(): Promise<void>;
}

/**
 * Connects to the servers (all at once), lists their tools (every page) and returns them as ToolDefinitions
 * whose `execute` calls the server (ADR 0047). One server that cannot be reached fails the whole (MCP_UNAVAILABLE
 * naming it), after closing the others; a secret that is not set fails it first (INVALID_CONFIG).
 */
export async function connectMcpServers(options: ConnectMcpOptions): Promise<McpServers> {
  const environment = options.environment ?? process.env;
  // Every secret is found before anything starts; the resolved configs live only in the connections.
  const targets = checkMcpServers(options.servers).map((s): McpTarget => ({
    config: resolveMcpSecrets(s, environment),
    redact: mcpRedactor(s, environment),
  }));
  const sdk = await loadSdk();
  const settled = await Promise.allSettled(
    targets.map((t) => McpServer.connect(sdk, t, options.signal, options.onToolsChanged)),
  );
  const connected = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const close = async () => {
    await Promise.allSettled(connected.map((c) => c.close()));
  };
  if (failed) {
    await close();
    throw failed.reason;
  }
  return {
    get tools() {
      return connected.flatMap((c) => c.tools);
    },
    servers: connected.map((c) => c.view()),
    close,
  };
}

/** One server: its connection, its current tools, and its calls in flight (an elicitation asks one of them). */
class McpServer implements McpConnectionEvents {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  protocolVersion: string | undefined;
  serverName: string | undefined;
  serverVersion: string | undefined;
  tools: readonly ToolDefinition[] = [];
  private link!: Link;
  private readonly watch: CallWatch;
  private readonly inFlight = new Set<ElicitingCall>();
  private relisting: Promise<void> | null = null;
  private relistAgain = false;

  private constructor(
    private readonly sdk: Sdk,
    private readonly target: McpTarget,
    private readonly timeout: number,
    private readonly onChanged: ((server: string) => void) | undefined,
  ) {
    this.name = target.config.name;
    this.transport = target.config.url === undefined ? 'stdio' : 'http';
    this.watch = new CallWatch((target.config.maxCallSeconds ?? DEFAULT_MCP_MAX_CALL_SECONDS) * 1000);
  }

  static async connect(
    sdk: Sdk,
    target: McpTarget,
    signal: AbortSignal | undefined,
    onChanged: ((server: string) => void) | undefined,
  ): Promise<McpServer> {
    const timeout = (target.config.timeoutSeconds ?? DEFAULT_MCP_TIMEOUT_SECONDS) * 1000;
    const server = new McpServer(sdk, target, timeout, onChanged);
    const { client, protocolVersion } = await openClient(sdk, target, server, timeout, signal);
    try {
      server.tools = await server.listed(client, signal);
    } catch (cause) {
      return unavailable(client, target, 'listing its tools: ', cause, signal);
    }
    server.link = new Link(sdk, target, server, timeout, client);
    server.protocolVersion = protocolVersion;
    server.serverName = client.getServerVersion()?.name;
    server.serverVersion = client.getServerVersion()?.version;
    return server;
  }

  close(): Promise<void> {
    this.watch.close();
    return this.link.close();
  }

  /** What callers see of it: its description, and its tools as they are now. */
  view(): McpServerInfo {
    const current = (): readonly ToolDefinition[] => this.tools;
    return {
      name: this.name,
      transport: this.transport,
      protocolVersion: this.protocolVersion,
      serverName: this.serverName,
      serverVersion: this.serverVersion,
      get tools() {
        return current();
      },
    };
  }

  /** Every page of the server's tools, as ToolDefinitions. */
  private async listed(client: Client, signal?: AbortSignal): Promise<ToolDefinition[]> {
    const listed: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: this.timeout,
        ...(signal ? { signal } : {}),
      });
      listed.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || cursor === '') break;
    }
    const members = memberNames(listed.map((t) => t.name));
    return listed.map((tool, i) => this.toolDefinition(tool, members[i] as string));
  }

  onToolsChanged(): void {
    // Notifications that come while the tools are listed make one more listing, not one each.
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = (async () => {
      for (let round = 0; round === 0 || this.relistAgain; round++) {
        // A server that keeps saying so is listed at most once a second.
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, RELIST_GAP_MS));
        this.relistAgain = false;
        const client = this.link.current;
        if (client === null) return;
        try {
          this.tools = await this.listed(client);
        } catch {
          // The old list stays; the next notification (or a restart) lists again.
          return;
        }
        try {
          this.onChanged?.(this.name);
        } catch {
          // A listener's failure is its own.
        }
      }
    })().finally(() => {
      this.relisting = null;
    });
  }

  onElicit(request: Parameters<McpConnectionEvents['onElicit']>[0]) {
    return answerElicitation(request, [...this.inFlight]);
  }

  private toolDefinition(tool: Tool, member: string): ToolDefinition {
    const server = this.target.config;
    const override = overrideOf(server, tool.name, member);
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
    const name = `${server.name}.${member}`;
    return Object.freeze({
      namespace: DEFAULT_TOOL_NAMESPACE,
      name,
      description,
      inputSchema,
      ...(outputSchema === undefined ? {} : { outputSchema }),
      effect: override.effect ?? effectFromAnnotations(tool.annotations),
      requiresApproval: override.requiresApproval ?? false,
      execute: (args: unknown, ctx: ToolContext) =>
        this.call(tool.name, `${DEFAULT_TOOL_NAMESPACE}.${name}`, args, ctx, where),
    });
  }

  private async call(
    mcpName: string,
    fullName: string,
    args: unknown,
    ctx: ToolContext,
    where: { server: string; tool: string },
  ): Promise<unknown> {
    const maxCallSeconds = this.target.config.maxCallSeconds ?? DEFAULT_MCP_MAX_CALL_SECONDS;
    // Its own signal, following the task's; the bound in all, progress or not: the SDK's own (`maxTotalTimeout`)
    // is checked only when a report comes and does not cancel the request; an abort does (notifications/cancelled).
    const watched = this.watch.start(ctx.signal, () =>
      timedOut(where, maxCallSeconds, 'in all (maxCallSeconds)'),
    );
    const stop = watched.stop;
    const entry: ElicitingCall = { ctx, tool: fullName, stop: (reason) => stop.abort(reason) };
    let client: Client;
    try {
      // Connected (the usual case): no wait for a promise.
      client = this.link.current ?? (await this.link.get());
    } catch (cause) {
      this.watch.end(watched);
      throw callFailure(this.sdk, cause, ctx.signal, where, this.target.redact);
    }
    this.inFlight.add(entry);
    try {
      const result = await client.callTool(
        { name: mcpName, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        {
          signal: stop.signal,
          timeout: this.timeout,
          // A server that reports progress keeps its call alive: the timeout runs from the last report.
          resetTimeoutOnProgress: true,
          onprogress: (progress) => ctx.log?.(progressLine(progress)),
        },
      );
      return mcpResultValue(result, where);
    } catch (cause) {
      if (stop.signal.aborted && !ctx.signal.aborted) throw stop.signal.reason;
      throw callFailure(this.sdk, cause, ctx.signal, where, this.target.redact);
    } finally {
      this.watch.end(watched);
      this.inFlight.delete(entry);
    }
  }
}

/**
 * MCP_TIMEOUT: a call that got no answer in time. The request was sent, so it is in doubt (`unreachable:
 * 'in_doubt'`): a durable task does not journal it as the call's outcome, and the call's effect decides whether it
 * runs again (ADR 0047).
 */
function timedOut(
  where: { server: string; tool: string },
  seconds: number | null,
  how: string,
): CodecallError {
  const after = seconds === null ? '' : ` in ${seconds} s`;
  return new CodecallError(
    'MCP_TIMEOUT',
    `MCP server ${where.server}: its tool ${where.tool} got no answer${after} ${how}; it may have run`,
    {
      details: {
        ...where,
        unreachable: 'in_doubt',
        ...(seconds === null ? {} : { timeout_seconds: seconds }),
      },
    },
  );
}

/** `progress 3/10: copying` (what the server sent: its counts and message). */
function progressLine(p: Progress): string {
  const count = p.total === undefined ? `${p.progress}` : `${p.progress}/${p.total}`;
  return `progress ${count}${typeof p.message === 'string' && p.message !== '' ? `: ${p.message}` : ''}`;
}

/** The operator's word on a tool, by its MCP name or the name programs call it by. */
function overrideOf(server: McpServerConfig, mcpName: string, member: string): McpToolOverride {
  return server.tools?.[mcpName] ?? server.tools?.[member] ?? {};
}

/** Whether a failed request reached the server: refused connections never did. */
function unreachableOf(cause: unknown): ToolUnreachable {
  for (let e: unknown = cause, depth = 0; e instanceof Error && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'ECONNREFUSED') return 'not_sent';
    e = e.cause;
  }
  return 'in_doubt';
}

/**
 * A call that did not get a result: the abort's own reason, the server's refusal, or an unreachable server
 * (`details.unreachable`: `not_sent` when no request left, `in_doubt` when the connection ended during the call).
 */
function callFailure(
  sdk: Sdk,
  cause: unknown,
  signal: AbortSignal,
  where: { server: string; tool: string },
  redact: (text: string) => string,
): unknown {
  if (signal.aborted) return signal.reason;
  if (isCodecallError(cause)) {
    return cause.code === 'MCP_UNAVAILABLE'
      ? new CodecallError(cause.code, cause.message, { details: { ...cause.details, ...where }, cause })
      : cause;
  }
  const message = redact(cause instanceof Error ? cause.message : String(cause));
  if (cause instanceof sdk.McpError && cause.code === (sdk.ErrorCode.RequestTimeout as number)) {
    // The server may have done it (the SDK sent notifications/cancelled): in doubt, as a cut connection is.
    const data = (cause.data ?? {}) as { timeout?: unknown };
    const seconds = typeof data.timeout === 'number' ? data.timeout / 1000 : null;
    return timedOut(where, seconds, 'nor progress (timeoutSeconds)');
  }
  if (cause instanceof sdk.McpError && cause.code !== (sdk.ErrorCode.ConnectionClosed as number)) {
    return new CodecallError('MCP_TOOL_ERROR', message, {
      details: { ...where, mcp_code: cause.code },
    });
  }
  return new CodecallError('MCP_UNAVAILABLE', `MCP server ${where.server}: ${message}`, {
    details: { ...where, unreachable: unreachableOf(cause) },
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
