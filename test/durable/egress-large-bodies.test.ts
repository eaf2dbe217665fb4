// Large fetch responses out of line (ADR 0046), end to end: a real HTTP server on loopback, the quickjs driver, the
// runtime and a SQLite store. A body over the threshold is streamed into the task's body store; the journal holds
// its digest; the guest streams it by ranges; a resumed task reads the same bytes and the server is not asked again.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import { useDurableFixture } from './fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

/** Deterministic bytes of a size. */
function pattern(size: number): Buffer {
  const out = Buffer.alloc(size);
  let x = 7;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
/** What the guest computes over the bytes it streams (it has no SHA-256): FNV-1a, 32 bits. */
function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}
const GUEST_FNV = `
  let h = 0x811c9dc5, n = 0;
  const add = (c) => { for (let i = 0; i < c.length; i++) h = Math.imul(h ^ c[i], 0x01000193) >>> 0; n += c.length; };`;

const LARGE = 6 * 1024 * 1024 + 77;
const large = pattern(LARGE);
let server: RecordingServer;
let port = 0;
let closedEarly = 0;
const hits = (path: string) => server.seen.filter((s) => s.url === path).length;

beforeAll(async () => {
  server = await startRecordingServer((req, _raw, res) => {
    if (req.url === '/large' || req.url === '/large-chunked') {
      // Chunked (no length) or with one, written in pieces as a real server would.
      res.writeHead(
        200,
        req.url === '/large'
          ? { 'content-length': String(LARGE) }
          : { 'content-type': 'application/octet-stream' },
      );
      let at = 0;
      const more = (): void => {
        while (at < LARGE) {
          const piece = large.subarray(at, Math.min(LARGE, at + 100_000));
          at += piece.length;
          if (!res.write(piece)) {
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      more();
    } else if (req.url === '/endless') {
      const piece = Buffer.alloc(64 * 1024, 1);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.on('close', () => (closedEarly += 1));
      const more = (): void => {
        while (!res.destroyed && res.write(piece));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    } else return false;
    return true;
  });
  port = server.port;
});
afterAll(() => server.close());

describe('large fetch bodies out of line', () => {
  const fx = useDurableFixture('egress-bodies');
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  const make = (): Runtime => {
    const r = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 20,
      egress: createEgress({ allowPrivate: true, limits: { maxBytes: 32 * 1024 * 1024 } }),
    });
    runtimes.push(r);
    r.start();
    return r;
  };
  const access = (extra: Record<string, unknown> = {}) => ({
    networkAccess: { allow: [`127.0.0.1:${port}`], allowHttp: true, ...extra },
  });
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  it('streams a multi-MiB body the store holds; the journal keeps its digest, not its bytes', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `${GUEST_FNV}
        const r = await fetch('${url('/large-chunked')}');
        const reader = r.body.getReader();
        for (let c = await reader.read(); !c.done; c = await reader.read()) add(c.value);
        const whole = new Uint8Array(await (await fetch('${url('/large')}')).arrayBuffer());
        return { status: r.status, n, h, whole: whole.length, last: whole[whole.length - 1] };`,
      constraints: access(),
    });
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: {
        output: { status: 200, n: LARGE, h: fnv(large), whole: LARGE, last: large[LARGE - 1] },
      },
    });
    const journal = await fx.store.readJournal(task.task_id);
    const outcomes = journal.filter((e) => e.type === 'tool_outcome');
    // Two fetches journaled, no body read.
    expect(journal.filter((e) => e.type === 'tool_intent').map((e) => e.data.tool)).toEqual([
      'egress.read',
      'egress.read',
    ]);
    const sha = createHash('sha256').update(large).digest('hex');
    for (const o of outcomes) {
      const payload = o.type === 'tool_outcome' ? o.data.payload : '';
      expect(payload).toContain(sha);
      expect(payload.length).toBeLessThan(4096);
    }
    // Kept once: the same bytes fetched twice are one body.
    const db = new Database(fx.path, { readonly: true });
    try {
      expect(db.prepare('SELECT sha256, size FROM bodies WHERE task_id = ?').all(task.task_id)).toEqual([
        { sha256: sha, size: LARGE },
      ]);
    } finally {
      db.close();
    }
  });

  it('a resumed task reads the same bytes from the store; the server is not asked again', async () => {
    const runtime = make();
    const before = hits('/large');
    const task = await runtime.submit({
      code: `${GUEST_FNV}
        const r = await fetch('${url('/large')}');
        const reader = r.body.getReader();
        for (let i = 0; i < 5; i++) add((await reader.read()).value);
        const answer = await input.wait('go');
        for (let c = await reader.read(); !c.done; c = await reader.read()) add(c.value);
        return { answer, n, h };`,
      constraints: access(),
    });
    expect(await runtime.wait(task.task_id)).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
    });
    expect(hits('/large')).toBe(before + 1);
    await runtime.provideInput(task.task_id, 'go', 'yes');
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: { answer: 'yes', n: LARGE, h: fnv(large) } },
    });
    expect(hits('/large')).toBe(before + 1);
  });

  it('a body over max_bytes is EGRESS_LIMIT and leaves nothing stored; an endless one is cut at the bound', async () => {
    const runtime = make();
    const closed = closedEarly;
    const task = await runtime.submit({
      code: `
        const get = (p) => fetch('http://127.0.0.1:${port}' + p).then(
          async (r) => (await r.arrayBuffer()).byteLength, (e) => [e.code, e.details.limit, e.details.max]);
        return [await get('/large'), await get('/large-chunked'), await get('/endless')];`,
      constraints: access({ maxBytes: 2 * 1024 * 1024 }),
    });
    const limit = ['EGRESS_LIMIT', 'max_bytes', 2 * 1024 * 1024];
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: [limit, limit, limit] },
    });
    // The server hears of the close a moment after the client dropped the connection.
    await vi.waitFor(() => expect(closedEarly).toBe(closed + 1));
    const db = new Database(fx.path, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM body_chunks WHERE task_id = ?').get(task.task_id)).toEqual(
        {
          n: 0,
        },
      );
    } finally {
      db.close();
    }
  });
});
