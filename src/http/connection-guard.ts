import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Connections open at once, streams included. */
  readonly maxConnections: number;
  /** Connections open at once from one remote address. */
  readonly maxConnectionsPerIp: number;
}

/**
 * Counts open connections, in all and per client IP, and refuses one over a cap cheaply: a fixed 503 envelope
 * written straight to the socket (no parsing of what it sent), then closed. Counts drop when a socket closes.
 */
export function guardConnections(server: Server, limits: ConnectionLimits): void {
  let open = 0;
  const perIp = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const mine = perIp.get(ip) ?? 0;
    if (open >= limits.maxConnections || mine >= limits.maxConnectionsPerIp) {
      const which = open >= limits.maxConnections ? 'the server' : 'your address';
      refuse(socket, `too many connections open from ${which}; close some and retry`);
      return;
    }
    open += 1;
    perIp.set(ip, mine + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left <= 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
  });
}

function refuse(socket: Socket, message: string): void {
  const body = JSON.stringify({ error: { code: 'TOO_MANY_CONNECTIONS', message, details: {} } });
  socket.on('error', () => undefined);
  // The socket is not ours to parse: write the answer, close, and destroy soon in case the peer never reads.
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}
