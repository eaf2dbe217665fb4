import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STREAM_RETRY_AFTER_S, streamLimiter } from './stream-limits.ts';
import type { StreamLimitOptions } from './stream-limits.ts';
import type { Principal } from '../spec/index.ts';
import { KeyRevocations, keyRevokedError } from './key-revocations.ts';

const HEARTBEAT_MS = 15_000;

/** One Server-Sent Events response, hijacked from fastify. */
export interface SseStream {
  /** False once the client left, the server closed or end() was called. */
  readonly open: boolean;
  /** Writes one event; `id` is its cursor (the client's `Last-Event-ID` when it reconnects). */
  send(this: void, event: string, data: unknown, id?: string): void;
  /** Settles once the socket took what was written (or the stream ended): a sender of many events waits on it. */
  drained(this: void): Promise<void>;
  /** Runs `fn` once, when the stream ends. */
  onEnd(this: void, fn: () => void): void;
  end(this: void): void;
}

/** What the streams of a server did: read by tests and operators (a debug counter, not a metric). */
export interface StreamStats {
  /** Streams open now. */
  open: number;
  /** The most bytes any stream held written but not flushed to its socket. */
  maxBufferedBytes: number;
  /** Streams ended because their client read too slowly (over `bufferBytes`). */
  endedSlow: number;
}

export interface StreamOptions extends StreamLimitOptions {
  /** Bytes one stream may hold written but unflushed; a stream over it is ended (its client resumes). */
  readonly bufferBytes: number;
  /** Filled in as streams run, when given. */
  readonly stats?: StreamStats;
}

export const defaultStreamOptions: StreamOptions = {
  bufferBytes: 1024 * 1024,
  maxPerKey: 16,
  maxPerTenant: 64,
};

/** What every stream route of one server shares: the caps count streams of both routes together. */
export interface SseSettings {
  readonly bufferBytes: number;
  readonly stats: StreamStats;
  readonly acquire: (principal: Principal) => () => void;
  /** Ends the streams of a key once it is revoked. */
  readonly revocations: KeyRevocations;
}

export function sseSettings(
  options: StreamOptions = defaultStreamOptions,
  revocations: KeyRevocations = new KeyRevocations(),
): SseSettings {
  return {
    bufferBytes: options.bufferBytes,
    stats: options.stats ?? { open: 0, maxBufferedBytes: 0, endedSlow: 0 },
    acquire: streamLimiter(options),
    revocations,
  };
}

/**
 * Opens SSE responses for a route: headers, a heartbeat comment every 15 s, the end when the client leaves, and
 * the end of every open stream when the server closes (a stream would otherwise hold `close()` forever). Each
 * stream holds a slot of its key's and tenant's caps (TOO_MANY_STREAMS before any header is sent) and at most
 * `bufferBytes` unflushed: a client that stops reading is cut off rather than buffered for without bound. A
 * stream of a key that is revoked gets an `error` event (KEY_REVOKED) and ends.
 */
export function sseOpener(
  app: FastifyInstance,
  settings: SseSettings = sseSettings(),
): (request: FastifyRequest, reply: FastifyReply) => SseStream {
  const streams = new Set<() => void>();
  const { acquire, stats } = settings;
  app.addHook('preClose', (done) => {
    for (const end of [...streams]) end();
    done();
  });
  return (request, reply) => {
    const { keyId } = request.principal;
    if (settings.revocations.isRevoked(keyId)) throw keyRevokedError(keyId ?? '');
    let release: () => void;
    try {
      release = acquire(request.principal);
    } catch (error) {
      void reply.header('retry-after', String(STREAM_RETRY_AFTER_S));
      throw error;
    }
    reply.hijack();
    const res = reply.raw;
    // A stream may be quiet for long (the listener drops idle sockets): its buffer bound ends a stalled one.
    // (An injected request's socket has no timeout to turn off.)
    if (typeof res.socket?.setTimeout === 'function') res.socket.setTimeout(0);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    let open = true;
    stats.open += 1;
    const ends: (() => void)[] = [];
    const end = (): void => {
      if (!open) return;
      open = false;
      stats.open -= 1;
      release();
      streams.delete(end);
      clearInterval(heartbeat);
      for (const fn of ends.splice(0)) fn();
      res.end();
    };
    // Writes one chunk unless it would take the unflushed bytes over the bound: then the stream is dropped (its
    // buffer freed at once, not flushed to a client that does not read). One chunk alone may exceed the bound.
    const write = (chunk: string): void => {
      if (!open) return;
      const size = Buffer.byteLength(chunk);
      if (res.writableLength > 0 && res.writableLength + size > settings.bufferBytes) {
        stats.endedSlow += 1;
        end();
        res.destroy();
        return;
      }
      res.write(chunk);
      stats.maxBufferedBytes = Math.max(stats.maxBufferedBytes, res.writableLength);
    };
    const heartbeat = setInterval(() => write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    streams.add(end);
    request.raw.on('close', end);
    // A revoked key's stream says why and ends, whatever it was sending.
    if (keyId !== null) {
      const unuse = settings.revocations.use(keyId, () => {
        const e = keyRevokedError(keyId);
        write(
          `event: error\ndata: ${JSON.stringify({ error: { code: e.code, message: e.message, details: e.details } })}\n\n`,
        );
        end();
      });
      ends.push(unuse);
    }
    return {
      get open() {
        return open;
      },
      send: (event, data, id) =>
        write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`),
      drained: () =>
        !open || !res.writableNeedDrain
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              res.once('drain', resolve);
              ends.push(resolve);
            }),
      onEnd: (fn) => {
        if (open) ends.push(fn);
        else fn();
      },
      end,
    };
  };
}
