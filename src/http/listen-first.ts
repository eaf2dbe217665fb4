import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CodecallError } from '../errors/index.ts';
import { replyToClientErrors } from './client-error-reply.ts';
import { guardConnections } from './connection-guard.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The bounds a listener puts on its connections (the config keys of config-connections.ts). */
export interface ConnectionOptions {
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
}

const DEFAULT_LIMITS: ConnectionOptions = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  maxConnectionsPerIp: 128,
};

/** A port bound before the service behind it exists: it answers 503 STARTING until `serve` hands it a handler. */
export interface EarlyListener {
  /** `http://host:port` it listens on. */
  readonly address: string;
  /** From now on every request goes to `handler` (the HTTP API). */
  serve(handler: Handler): void;
  /** Stops accepting and ends idle connections; settles once the server is closed. */
  close(): Promise<void>;
}

/**
 * Binds the port first, with nothing but node:http loaded, so a taken port is known (PORT_IN_USE) before the
 * database is opened or a task is claimed, and a starting server answers health checks at once.
 */
export async function listenFirst(options: {
  port: number;
  host: string;
  signal?: AbortSignal;
  /** Time and connection bounds (config-connections.ts); each defaults to that file's default. */
  limits?: Partial<ConnectionOptions>;
}): Promise<EarlyListener> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  let handler: Handler = starting;
  // node checks requestTimeout/headersTimeout every connectionsCheckingInterval (30 s by default): check often
  // enough that a trickled body or header is dropped close to its bound.
  const interval = Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: interval,
    },
    (req, res) => handler(req, res),
  );
  // A connection with no progress either way for requestTimeoutMs is dropped: a client that stops reading its
  // answers (pipelined requests, a big download) would hold them and its connection slot forever. A stream (SSE)
  // may be quiet for long: it turns this off for its socket and bounds its own buffer (sse-stream.ts).
  server.setTimeout(limits.requestTimeoutMs);
  dropSilentClients(server);
  guardConnections(server, limits);
  replyToClientErrors(server);
  await bind(server, options);
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  let closed: Promise<void> | undefined;
  return {
    address: `http://${host}:${bound.port}`,
    serve: (next) => {
      handler = next;
    },
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        // A keep-alive connection whose request was in flight turns idle only later: end those as they do.
        const sweep = setInterval(() => server.closeIdleConnections(), 50).unref();
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      })),
  };
}

/**
 * The silence the socket timeout measures must be the client's. While a whole request waits on the server's
 * answer (a big batch on a loaded database), nothing moves either way: that socket is left alone, and its timer
 * starts again with the answer's first bytes. Any other quiet socket (a trickled request, an idle keep-alive
 * connection, an answer the client stopped reading) is destroyed, as node does without a 'timeout' listener.
 */
function dropSilentClients(server: Server): void {
  const waiting = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  // The socket's latest exchange; no listener on `res` ('close' listeners change how node paces pipelined answers).
  server.on('request', (req: IncomingMessage, res: ServerResponse) => waiting.set(req.socket, { req, res }));
  server.on('timeout', (socket: Socket) => {
    const exchange = waiting.get(socket);
    if (exchange && exchange.req.complete && !exchange.res.headersSent) return;
    socket.destroy();
  });
}

function bind(server: Server, options: { port: number; host: string; signal?: AbortSignal }): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (e: NodeJS.ErrnoException): void => {
      server.off('listening', listening);
      reject(listenError(e, options));
    };
    const listening = (): void => {
      server.off('error', failed);
      resolve();
    };
    server.once('error', failed);
    server.once('listening', listening);
    // `localhost` is the IPv4 loopback: one socket, where a client of `localhost` (which tries both) finds it.
    server.listen({
      port: options.port,
      host: options.host === 'localhost' ? '127.0.0.1' : options.host,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  });
}

/**
 * A taken port is an operator's everyday mistake: one stable code and a line that says what to do. Any other
 * failure to listen (an address not of this machine, a host name that does not resolve, a privileged port) is
 * INVALID_CONFIG naming the address: it too is fixed in the config, never a stack trace.
 */
function listenError(e: NodeJS.ErrnoException, options: { port: number; host: string }): Error {
  const where = `${options.host}:${options.port}`;
  if (e.code === 'EADDRINUSE') {
    return new CodecallError(
      'PORT_IN_USE',
      `port ${where} is taken (another codecall serve on it?): stop that server or choose another port ` +
        'with --port N, CODECALL_PORT=N or "port" in the config file (0 picks a free one)',
      { details: { host: options.host, port: options.port } },
    );
  }
  if (e.syscall === 'getaddrinfo') {
    return new CodecallError(
      'INVALID_CONFIG',
      `cannot listen on ${where}: the host name ${options.host} does not resolve (${e.code}); ` +
        'give --host (CODECALL_HOST) an address of this machine, e.g. 127.0.0.1',
      { details: { host: options.host, port: options.port, errno: e.code } },
    );
  }
  if (typeof e.code === 'string' && (e.syscall === 'listen' || e.syscall === 'bind')) {
    return new CodecallError('INVALID_CONFIG', `cannot listen on ${where}: ${e.code} (${e.message})`, {
      details: { host: options.host, port: options.port, errno: e.code },
    });
  }
  return e;
}

/** Before the API is up: alive (healthz), not ready (readyz), and every other request asked to come back. */
function starting(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') return reply(res, 200, { status: 'starting' });
  reply(
    res,
    503,
    { error: { code: 'STARTING', message: 'the service is starting; try again shortly', details: {} } },
    { 'retry-after': '1' },
  );
}

function reply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
