import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What the receiver answers to its n-th request (0-based): a status, a redirect, or no answer at all. */
export type Reply = number | { status: number; location: string } | 'hang';

/** A real HTTP server on 127.0.0.1 that records what it gets. */
export async function startReceiver(reply: (n: number) => Reply = () => 204): Promise<{
  url: string;
  received: ReceivedWebhook[];
  /** Resolves when the n-th request (1-based) has arrived. */
  arrived(n: number): Promise<void>;
  close(): Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const answer = reply(received.length);
      received.push({ path: req.url ?? '', headers: req.headers, body });
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
      if (answer === 'hang') hanging.push(res);
      else if (typeof answer === 'number') res.writeHead(answer).end();
      else res.writeHead(answer.status, { location: answer.location }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    arrived: (n) =>
      received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
