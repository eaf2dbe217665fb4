import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { ToolRegistry } from '../../src/internal.ts';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { findPostgresBin, startPostgresCluster } from '../support/postgres-cluster.ts';
import type { PostgresCluster } from '../support/postgres-cluster.ts';

// /readyz asks the store whether it can commit: on PostgreSQL, a server that goes down makes it 503
// STORE_UNAVAILABLE while /healthz (liveness) stays 200, and it is 200 again once the server is back, with no
// restart. The test stops and starts a cluster of its own (the shared one serves other files meanwhile).

const run = promisify(execFile);
const bin = findPostgresBin();
const skipped =
  bin === null ? ' (skipped: PostgreSQL is not installed here: apt-get install postgresql)' : '';

/** pg_ctl on the cluster's data directory, as the user that owns it (initdb refuses root). */
async function pgCtl(cluster: PostgresCluster, ...args: string[]): Promise<void> {
  const ctl = join(bin ?? '', 'pg_ctl');
  const full = ['-D', join(cluster.dataDir, 'data'), '-w', ...args];
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', ctl, ...full]);
  else await run(ctl, full);
}

async function until<T>(check: () => Promise<T | null>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(bin === null)(`/readyz on PostgreSQL${skipped}`, () => {
  it('is 503 STORE_UNAVAILABLE while the server is down (liveness stays 200), 200 once it is back', async () => {
    const cluster = await startPostgresCluster();
    const port = new URL(cluster.url).port;
    const store = await createPostgresTaskStore({ url: cluster.url, poolSize: 2, connectTimeoutMs: 2000 });
    const runtime = createRuntime({ store, drivers: [], tools: new ToolRegistry([]) });
    const app = buildServer({ runtime, store });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    try {
      expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
      await pgCtl(cluster, '-m', 'fast', 'stop');
      const down = await until(async () => {
        const r = await get('/readyz');
        return r.status === 503 ? r : null;
      }, '/readyz 503');
      expect(down.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
      expect((await get('/healthz')).status).toBe(200);
      await pgCtl(
        cluster,
        '-l',
        join(cluster.dataDir, 'server.log'),
        '-o',
        `-p ${port} -k ${cluster.dataDir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        'start',
      );
      await until(async () => ((await get('/readyz')).status === 200 ? true : null), '/readyz 200');
    } finally {
      await app.close();
      await runtime.close();
      await store.close();
      await cluster.stop();
    }
  });
});
