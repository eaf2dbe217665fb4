// The egress tests' HTTP server on loopback: records every request; `/count` answers how many times it was asked
// (a JSON `{ n }`); each test file answers its own paths, and anything else is a 404.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

export interface RecordingServer {
  readonly port: number;
  readonly seen: Seen[];
  /** Times `/count` was asked. */
  readonly count: number;
  close(): Promise<void>;
}

/** `answer` returns false for a path it does not know. */
export async function startRecordingServer(
  answer: (req: IncomingMessage, body: Buffer, res: ServerResponse) => boolean,
): Promise<RecordingServer> {
  const seen: Seen[] = [];
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body: body.toString(),
        headers: req.headers,
      });
      if (req.url === '/count') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n: ++count }));
      } else if (!answer(req, body, res)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    get count() {
      return count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
