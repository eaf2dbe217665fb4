import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { traceContextOf } from '../telemetry/index.ts';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CodecallError } from '../errors/index.ts';
import type { McpServerConfig } from './mcp-config.ts';

/**
 * The SDK, loaded on first use: importing it takes about half a second (its protocol schemas), which neither
 * `import 'codecall'` nor a command without MCP servers should pay.
 */
export async function loadSdk() {
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
    ElicitRequestSchema: types.ElicitRequestSchema,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

export type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** The least time connecting to a server (its start and `initialize`) is given, whatever its call timeout. */
const MIN_START_TIMEOUT_MS = 60_000;

/** What codecall tells MCP servers it is. */
const CLIENT_INFO = { name: 'codecall', version: '0.1.0' };

/** A server as connected: its config with secrets resolved (never shown), and what hides them in messages. */
export interface McpTarget {
  /** The config with `{{env:NAME}}` resolved: given to the transport only. */
  readonly config: McpServerConfig;
  /** Replaces the secret values the config holds in a message (an error may echo a header). */
  readonly redact: (text: string) => string;
}

/** What a connection tells its owner: a server's elicitation, and that its tool list changed. */
export interface McpConnectionEvents {
  onElicit(request: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult>;
  onToolsChanged(): void;
}

/**
 * Requests to an MCP server carry the trace of the call they serve (its `traceparent`, ADR 0053); those made
 * outside any (connecting, listing) carry none.
 */
const tracedFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
  const headers = new Headers(init?.headers);
  const tc = traceContextOf();
  if (tc && !headers.has('traceparent')) {
    headers.set('traceparent', tc.traceparent);
    if (tc.tracestate && !headers.has('tracestate')) headers.set('tracestate', tc.tracestate);
  }
  return fetch(url, { ...init, headers });
};

function transportOf(sdk: Sdk, server: McpServerConfig): Transport {
  if (server.url !== undefined) {
    return new sdk.StreamableHTTPClientTransport(new URL(server.url), {
      ...(server.headers ? { requestInit: { headers: { ...server.headers } } } : {}),
      fetch: tracedFetch,
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
export async function openClient(
  sdk: Sdk,
  target: McpTarget,
  events: McpConnectionEvents,
  timeout: number,
  signal: AbortSignal | undefined,
): Promise<{ client: Client; protocolVersion: string | undefined }> {
  const server = target.config;
  // Form-mode elicitation: a server may ask for input mid-call (the task pauses awaiting_input, ADR 0047).
  const client = new sdk.Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(sdk.ElicitRequestSchema, (request, extra) =>
    events.onElicit(request.params, extra.signal),
  );
  client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => events.onToolsChanged());
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
    // Starting a server (`npx` fetching a package) may take longer than a call should: never less than a minute.
    const startTimeout = Math.max(timeout, MIN_START_TIMEOUT_MS);
    await client.connect(transport, { timeout: startTimeout, ...(signal ? { signal } : {}) });
    return { client, protocolVersion };
  } catch (cause) {
    return unavailable(client, target, '', cause, signal);
  }
}

/**
 * A connection that failed while it was being set up (`doing`: what it was at, e.g. "listing its tools: "): the
 * client is closed, and the failure is the abort's reason or MCP_UNAVAILABLE naming the server, secrets redacted.
 */
export async function unavailable(
  client: Client,
  target: McpTarget,
  doing: string,
  cause: unknown,
  signal: AbortSignal | undefined,
): Promise<never> {
  await client.close().catch(() => undefined);
  if (signal?.aborted) throw signal.reason;
  const { name, url, command } = target.config;
  throw new CodecallError(
    'MCP_UNAVAILABLE',
    target.redact(`MCP server ${name} (${url ?? command}): ${doing}${(cause as Error).message}`),
    { details: { server: name } },
  );
}

/** The first wait before connecting again to a server whose connection failed, doubled up to the longest. */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;

/**
 * A server's connection. When it ends (a stdio server exits, an HTTP server goes away), the next call connects
 * again; after a failed attempt, calls fail at once (MCP_UNAVAILABLE) until a wait of 1 s, doubling up to 30 s,
 * has passed. A call in flight when the connection ends fails with MCP_UNAVAILABLE: whether it ran is unknown.
 * The errors `get()` throws say `unreachable: 'not_sent'`: no request left.
 */
export class Link {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private failures = 0;
  private retryAt = 0;
  private closed = false;

  constructor(
    private readonly sdk: Sdk,
    private readonly target: McpTarget,
    private readonly events: McpConnectionEvents,
    private readonly timeout: number,
    first: Client,
  ) {
    this.adopt(first);
  }

  private get name(): string {
    return this.target.config.name;
  }

  private adopt(client: Client): void {
    this.client = client;
    client.onclose = () => {
      if (this.client === client) this.client = null;
    };
  }

  private unreachable(message: string, cause?: unknown): CodecallError {
    return new CodecallError('MCP_UNAVAILABLE', this.target.redact(message), {
      details: { server: this.name, unreachable: 'not_sent' },
      ...(cause === undefined ? {} : { cause }),
    });
  }

  async get(): Promise<Client> {
    if (this.closed) throw this.unreachable(`MCP server ${this.name} is closed`);
    if (this.client !== null) return this.client;
    const wait = this.retryAt - Date.now();
    if (wait > 0 && this.connecting === null) {
      throw this.unreachable(
        `MCP server ${this.name} is not connected (next attempt in ${Math.ceil(wait / 1000)} s)`,
      );
    }
    this.connecting ??= openClient(this.sdk, this.target, this.events, this.timeout, undefined)
      .then(
        ({ client }) => {
          this.failures = 0;
          if (this.closed) {
            void client.close();
            throw this.unreachable(`MCP server ${this.name} is closed`);
          }
          this.adopt(client);
          return client;
        },
        (e: unknown) => {
          this.failures += 1;
          this.retryAt =
            Date.now() + Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** (this.failures - 1));
          throw this.unreachable((e as Error).message, e);
        },
      )
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  /** The client when connected, without connecting (listing tools again after a change). */
  get current(): Client | null {
    return this.client;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.close();
  }
}
