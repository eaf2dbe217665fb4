import { request as httpRequest } from 'node:http';
import { withTraceHeaderList } from '../telemetry/index.ts';
import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { bodyTooLarge, closedMidBody, failed, overLimit } from './egress-errors.ts';
import { pinnedLookup } from './pinned-lookup.ts';
import type { Address, Destination } from './vet-destination.ts';

export interface HopResponse {
  readonly request: ClientRequest;
  readonly response: IncomingMessage;
}

function headerError(host: string, error: unknown, maxHeaderBytes: number): Error {
  if ((error as { code?: unknown }).code === 'HPE_HEADER_OVERFLOW')
    return overLimit(
      'header_bytes',
      maxHeaderBytes,
      `the response headers of ${host} are over ${maxHeaderBytes} bytes`,
    );
  return failed(host, error);
}

/** RFC 9110's idempotent methods: sent again once when a kept-alive connection turns out closed. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const STALE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export interface HopOptions {
  readonly to: Destination;
  readonly addresses: readonly Address[];
  readonly method: string;
  readonly headers: readonly string[];
  readonly body: Buffer | null;
  readonly maxHeaderBytes: number;
  readonly signal: AbortSignal;
  /** Kept-alive connections to these very addresses (connection-pool.ts); absent: a connection of its own. */
  readonly agent?: HttpAgent;
}

/**
 * Sends one hop and resolves at the response's headers (the body is the caller's to read or drop), on a connection
 * to its own vetted addresses. TLS checks the certificate against the host name, which is also the SNI name,
 * whatever address it connects to. A kept-alive connection the server closed as the request went out (the usual
 * race) fails before any answer: an idempotent request is sent again on a fresh connection, others fail.
 */
export function sendHop(options: HopOptions): Promise<HopResponse> {
  return sendOn(options).catch((error: unknown) => {
    if (!(error instanceof StaleConnection)) throw error;
    if (IDEMPOTENT.has(options.method) && !options.signal.aborted)
      return sendOn({ ...options, agent: undefined });
    throw error.cause;
  });
}

class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super('a kept-alive connection was closed');
  }
}

function sendOn(options: HopOptions): Promise<HopResponse> {
  const { to, signal } = options;
  const https = to.url.protocol === 'https:';
  return new Promise<HopResponse>((resolve, reject) => {
    signal.throwIfAborted();
    const request = (https ? httpsRequest : httpRequest)(
      {
        protocol: to.url.protocol,
        host: to.connectHost,
        port: to.port,
        path: `${to.url.pathname}${to.url.search}`,
        method: options.method,
        // The task's trace goes with the request (unless the program set its own traceparent), ADR 0053.
        headers: withTraceHeaderList(options.headers),
        lookup: pinnedLookup(options.addresses),
        agent: options.agent ?? false,
        maxHeaderSize: options.maxHeaderBytes,
        // Explicit, so no Host header or address can change the name the certificate is checked against.
        ...(https && isIP(to.connectHost) === 0 ? { servername: to.connectHost } : {}),
      },
      (response) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ request, response });
      },
    );
    const onAbort = (): void => {
      request.destroy();
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      const code = (error as { code?: unknown }).code;
      const failure = headerError(to.host, error, options.maxHeaderBytes);
      reject(
        request.reusedSocket && typeof code === 'string' && STALE.has(code)
          ? new StaleConnection(failure)
          : failure,
      );
    });
    request.end(options.body ?? undefined);
  });
}

/**
 * The response body, at most `maxBytes`: past it the connection is destroyed and EGRESS_LIMIT thrown, so no more
 * than the limit (and one chunk) is ever held. A declared length over it fails before reading anything.
 */
export function readBody(
  hop: HopResponse,
  options: {
    readonly host: string;
    readonly maxBytes: number;
    readonly signal: AbortSignal;
    readonly head: boolean;
  },
): Promise<Buffer> {
  const { request, response } = hop;
  const { maxBytes, signal } = options;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | null): void => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      if (error === null) {
        resolve(Buffer.concat(chunks, size));
        return;
      }
      response.destroy();
      request.destroy();
      reject(error);
    };
    const onAbort = (): void => finish(signal.reason as Error);
    const declared = Number(response.headers['content-length']);
    const bodiless = options.head || response.statusCode === 204 || response.statusCode === 304;
    if (!bodiless && Number.isFinite(declared) && declared > maxBytes) {
      finish(bodyTooLarge(options.host, maxBytes));
      return;
    }
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(bodyTooLarge(options.host, maxBytes));
      else chunks.push(chunk);
    });
    response.on('end', () => finish(null));
    response.on('error', (error) => finish(failed(options.host, error)));
    response.on('close', () => {
      if (!response.complete) finish(closedMidBody(options.host));
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
