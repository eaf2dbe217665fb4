import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const HEARTBEAT_MS = 15_000;

/** One Server-Sent Events response, hijacked from fastify. */
export interface SseStream {
  /** False once the client left, the server closed or end() was called. */
  readonly open: boolean;
  send(this: void, event: string, data: unknown): void;
  /** Runs `fn` once, when the stream ends. */
  onEnd(this: void, fn: () => void): void;
  end(this: void): void;
}

/**
 * Opens SSE responses for a route: headers, a heartbeat comment every 15 s, the end when the client leaves, and
 * the end of every open stream when the server closes (a stream would otherwise hold `close()` forever).
 */
export function sseOpener(app: FastifyInstance): (request: FastifyRequest, reply: FastifyReply) => SseStream {
  const streams = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of [...streams]) end();
    done();
  });
  return (request, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    let open = true;
    const ends: (() => void)[] = [];
    const heartbeat = setInterval(() => open && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    const end = (): void => {
      if (!open) return;
      open = false;
      streams.delete(end);
      clearInterval(heartbeat);
      for (const fn of ends.splice(0)) fn();
      res.end();
    };
    streams.add(end);
    request.raw.on('close', end);
    return {
      get open() {
        return open;
      },
      send: (event, data) => {
        if (open) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      },
      onEnd: (fn) => {
        if (open) ends.push(fn);
        else fn();
      },
      end,
    };
  };
}
