// A worker SIGKILLed while its tasks' requests are in flight (issue 21): on recovery a completed request is
// answered from the journal (the server is not asked again), a GET in flight is made again (egress.read, a read),
// and a POST in flight is not: its task pauses needs_attention, as for an unsafe tool's call in doubt. A body stored
// out of line (ADR 0046) is read again from the store; one the crash cut mid-body is fetched again, whole, and the
// rows the crash left of it are swept.
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { startCrashWorker } from './crash-fixture.ts';

/** 2 MiB of known bytes: stored out of line (ADR 0046), summed by the guest. */
const BIG = Buffer.from(Array.from({ length: 2 * 1024 * 1024 }, (_, i) => (i * 31 + (i >> 11)) & 255));
// Every 61st byte by its place in the body, so that a byte lost, doubled or moved between ranges changes the sum.
const BIG_SUM = BIG.reduce((sum, b, i) => (i % 61 === 0 ? sum + b : sum), 0);
const SUM_BODY = `async (r) => { let n = 0, sum = 0; for await (const c of r.body) { for (let i = (61 - (n % 61)) % 61; i < c.length; i += 61) sum += c[i]; n += c.length; } return [n, sum]; }`;

describe('egress across a SIGKILL', () => {
  let server: Server;
  let port = 0;
  let dir = '';
  const hits = new Map<string, number>();
  // The first slow request of each path is held until the worker is dead; later ones answer at once.
  const held: ServerResponse[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const key = `${req.method} ${req.url}`;
      const n = (hits.get(key) ?? 0) + 1;
      hits.set(key, n);
      req.resume();
      if (req.url?.startsWith('/slow') && n === 1) {
        held.push(res);
        return;
      }
      if (req.url?.startsWith('/big')) {
        // Half the body, then held on the first request of /big-cut: the worker dies mid-body.
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': String(BIG.length),
        });
        if (req.url === '/big-cut' && n === 1) {
          res.write(BIG.subarray(0, BIG.length / 2));
          held.push(res);
        } else res.end(BIG);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key, n }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    dir = await mkdtemp(join(tmpdir(), 'codecall-egress-crash-'));
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  /** A worker SIGKILLed once two requests are held, then another that runs every task to its end. */
  async function killAndRecover(db: string, killed: string, recovering: string): Promise<void> {
    const first = startCrashWorker('crash-worker-egress.ts', [db, killed]);
    await first.ready;
    for (let i = 0; i < 400 && held.length < 2; i++) await sleep(25);
    expect(held.length, first.stderr()).toBe(2);
    first.child.kill('SIGKILL');
    await first.exited;
    for (const res of held.splice(0)) res.destroy();
    const second = startCrashWorker('crash-worker-egress.ts', [db, recovering]);
    expect(await second.exited, second.stderr()).toBe(0);
  }

  it('replays what completed, runs a read again, and pauses on a POST in doubt', async () => {
    const db = join(dir, 'tasks.db');
    const store = await createSqliteTaskStore({ path: db });
    const access = { networkAccess: { allow: [`127.0.0.1:${port}`], allowHttp: true } };
    const base = `http://127.0.0.1:${port}`;
    const reader = await store.createTask({
      kind: 'code',
      language: 'javascript',
      seed: 1,
      constraints: access,
      code: `
        const first = await (await fetch('${base}/count-r')).json();
        const slow = await (await fetch('${base}/slow-r')).json();
        return { first, slow };`,
    });
    const poster = await store.createTask({
      kind: 'code',
      language: 'javascript',
      seed: 2,
      constraints: access,
      code: `
        const first = await (await fetch('${base}/count-p')).json();
        const posted = await (await fetch('${base}/slow-p', { method: 'POST', body: 'pay' })).json();
        return { first, posted };`,
    });
    // Both tasks have a request in flight: the worker dies under them; another recovers them.
    await killAndRecover(db, 'worker-1', 'worker-2');

    const r = await store.getTask(reader.id);
    expect(r).toMatchObject({ status: 'succeeded' });
    expect(JSON.parse(String(r?.result))).toEqual({
      first: { key: 'GET /count-r', n: 1 },
      slow: { key: 'GET /slow-r', n: 2 },
    });
    const p = await store.getTask(poster.id);
    expect(p).toMatchObject({ status: 'paused', pauseReason: 'needs_attention' });
    // Completed requests were answered from the journal; the POST in doubt was not made again.
    expect(Object.fromEntries(hits)).toEqual({
      'GET /count-r': 1,
      'GET /slow-r': 2,
      'GET /count-p': 1,
      'POST /slow-p': 1,
    });
    await store.close();
  });
  it('a stored body is read again from the store, and a body cut by the crash is fetched again whole', async () => {
    const db = join(dir, 'bodies.db');
    const store = await createSqliteTaskStore({ path: db });
    const access = { networkAccess: { allow: [`127.0.0.1:${port}`], allowHttp: true } };
    const base = `http://127.0.0.1:${port}`;
    const stored = await store.createTask({
      kind: 'code',
      language: 'javascript',
      seed: 3,
      constraints: access,
      code: `
        const sum = ${SUM_BODY};
        const big = await sum(await fetch('${base}/big'));
        const slow = await (await fetch('${base}/slow-b')).json();
        return { big, slow, again: await sum(await fetch('${base}/big')) };`,
    });
    const cut = await store.createTask({
      kind: 'code',
      language: 'javascript',
      seed: 4,
      constraints: access,
      code: `return await (${SUM_BODY})(await fetch('${base}/big-cut'));`,
    });
    await killAndRecover(db, 'worker-b1', 'worker-b2');
    const s = await store.getTask(stored.id);
    expect(s, JSON.stringify(s?.error)).toMatchObject({ status: 'succeeded' });
    expect(JSON.parse(String(s?.result))).toEqual({
      big: [BIG.length, BIG_SUM],
      slow: { key: 'GET /slow-b', n: 2 },
      again: [BIG.length, BIG_SUM],
    });
    const c = await store.getTask(cut.id);
    expect(c, JSON.stringify(c?.error)).toMatchObject({ status: 'succeeded' });
    expect(JSON.parse(String(c?.result))).toEqual([BIG.length, BIG_SUM]);
    // The first /big completed before the crash: answered from the journal and the store, not fetched again.
    expect(hits.get('GET /big')).toBe(2);
    expect(hits.get('GET /big-cut')).toBe(2);
    await store.close();
    const raw = new Database(db, { readonly: true });
    try {
      const rows = (sql: string) => (raw.prepare(sql).get(cut.id) as { n: number }).n;
      // The run after the crash swept the cut upload's rows: only the named body's are left.
      expect(
        rows(
          'SELECT count(*) AS n FROM body_chunks c WHERE task_id = ? AND NOT EXISTS (SELECT 1 FROM bodies b WHERE b.task_id = c.task_id AND b.upload = c.upload)',
        ),
      ).toBe(0);
      expect(rows('SELECT count(*) AS n FROM body_chunks WHERE task_id = ?')).toBe(
        Math.ceil(BIG.length / (256 * 1024)),
      );
    } finally {
      raw.close();
    }
  });
});
