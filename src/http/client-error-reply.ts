import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** node's own early answers (bad request line, headers too large, too slow), as the envelope instead of bare. */
const ANSWERS: Record<string, { status: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: '431 Request Header Fields Too Large',
    code: 'HEADERS_TOO_LARGE',
    message: 'the request headers are too large',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: '408 Request Timeout',
    code: 'REQUEST_TIMEOUT',
    message: 'the request took too long to arrive',
  },
};
const MALFORMED = { status: '400 Bad Request', code: 'BAD_REQUEST', message: 'malformed HTTP request' };

/**
 * Replaces node's default `clientError` handling (a body-less 400/408/431) with a minimal response carrying the
 * JSON envelope, where the socket can still take it; never throws. The connection is closed either way.
 */
export function replyToClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    try {
      socket.on('error', () => undefined);
      // ECONNRESET and the like: the peer is gone; a response was already started: nothing well-formed to add.
      const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
        ?.headersSent;
      if (error.code === 'ECONNRESET' || !socket.writable || started === true) {
        socket.destroy();
        return;
      }
      const answer = ANSWERS[error.code ?? ''] ?? MALFORMED;
      const body = JSON.stringify({
        error: { code: answer.code, message: answer.message, details: {} },
      });
      socket.end(
        `HTTP/1.1 ${answer.status}\r\ncontent-type: application/json; charset=utf-8\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      setTimeout(() => socket.destroy(), 1000).unref();
    } catch {
      socket.destroy();
    }
  });
}
