// The external system the chaos tools act on: a real HTTP server on loopback, owned by the harness and outside
// the codecall database, that records every call's start and every side effect with the writer's pid and token.
// Like a real system given fencing tokens, it refuses a write whose token is older than one it has seen for the
// task (409): that write is recorded as `refused`, not as a side effect.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LedgerRecord {
  /** `begin` as a tool starts, `write` for its side effect (a read tool writes nothing), `refused` for a write
   * with a stale fencing token. */
  readonly kind: 'begin' | 'write' | 'refused';
  /** The call's identity in the plan: `T<task>.C<call>`. */
  readonly op: string;
  readonly effect: string;
  readonly pid: number;
  /** The fencing token the tool saw (`ctx.fencingToken`), null while tools are not given one. */
  readonly token: number | null;
  /** The idempotency key of a keyed call. */
  readonly key: string | null;
  /** When the ledger received it (this machine's clock, the servers' too). */
  readonly at: number;
}

export interface Ledger {
  readonly url: string;
  readonly records: readonly LedgerRecord[];
  close(): Promise<void>;
}

export async function startLedger(): Promise<Ledger> {
  const records: LedgerRecord[] = [];
  /** The newest fencing token seen per task (`T<i>`). */
  const newestToken = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        const r = JSON.parse(body) as Omit<LedgerRecord, 'at'>;
        const task = r.op.split('.')[0] ?? '';
        const token = r.token ?? null;
        const newest = newestToken.get(task);
        const stale = r.kind === 'write' && token !== null && newest !== undefined && token < newest;
        if (token !== null && !stale) newestToken.set(task, Math.max(token, newest ?? token));
        records.push({ ...r, kind: stale ? 'refused' : r.kind, token, key: r.key ?? null, at: Date.now() });
        res.writeHead(stale ? 409 : 204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/ledger`,
    records,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
