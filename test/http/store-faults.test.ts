// Health tells the truth: a real SQLite file on a real small filesystem (tmpfs) that fills up or turns read-only
// under a real HTTP server. /readyz answers 503 STORE_UNAVAILABLE with the fault's kind while the store cannot
// commit, /healthz stays 200 (degraded), the fault is logged once, and once the fault is cleared the server
// recovers by itself: /readyz 200 and a task runs, without a restart.
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer, startService } from '../../src/http/index.ts';
import { ToolRegistry, createQuickJsDriver } from '../../src/internal.ts';
import type { StoreHealthEvent } from '../../src/internal.ts';
import { loadConfig } from '../../src/service/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { crashWhileOpen, mountSmallDisk, smallDiskUnavailable } from '../store/small-disk.ts';

async function until<T>(check: () => Promise<T | null>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function client(base: string) {
  const get = async (path: string): Promise<Reply> => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const post = async (body: unknown): Promise<Reply> => {
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** Submits a program and waits for its end; its final view. */
  const run = async (code: string): Promise<Record<string, unknown>> => {
    const created = await post({ code });
    expect(created.status).toBe(201);
    const id = String(created.body.task_id);
    return until(async () => {
      const view = (await get(`/api/v1/tasks/${id}`)).body;
      return ['succeeded', 'failed', 'cancelled'].includes(String(view.status)) ? view : null;
    }, `task ${id} to end`);
  };
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(name));
    return Number(line?.split(' ').pop() ?? Number.NaN);
  };
  return { get, post, run, metric };
}

const skipped = smallDiskUnavailable === null ? '' : ` (skipped: ${smallDiskUnavailable})`;

describe.skipIf(smallDiskUnavailable !== null)(`store faults under a real server${skipped}`, () => {
  it('disk full: /readyz 503 STORE_UNAVAILABLE (disk_full), logged once; after space is freed /readyz 200 and tasks run', async () => {
    const disk = mountSmallDisk(4 << 20);
    onTestFinished(() => disk.unmount());
    const lines: string[] = [];
    const config = loadConfig({
      env: {},
      flags: { port: '0', db: join(disk.dir, 'tasks.db'), insecureNoAuth: true, python: false },
    });
    const service = await startService(config, { log: (line) => lines.push(line) });
    const api = client(service.address);
    try {
      expect(await api.get('/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
      expect((await api.run('return 6 * 7')).result).toMatchObject({ output: 42 });

      disk.fill();
      // A submission fails (it cannot commit); readiness says so, with what to do.
      expect((await api.post({ code: 'return 1' })).status).toBeGreaterThanOrEqual(500);
      const notReady = await until(async () => {
        const r = await api.get('/readyz');
        return r.status === 503 ? r : null;
      }, '/readyz 503');
      expect(notReady.body).toMatchObject({
        error: { code: 'STORE_UNAVAILABLE', details: { kind: 'disk_full', sqliteCode: 'SQLITE_FULL' } },
      });
      expect(JSON.stringify(notReady.body)).toContain('is full: free space');
      const live = await api.get('/healthz');
      expect(live.status).toBe(200);
      expect(live.body).toMatchObject({ status: 'degraded', store: { faults: [{ kind: 'disk_full' }] } });
      // More failures (probes, submissions) are counted, not logged again.
      for (let i = 0; i < 3; i++)
        expect((await api.post({ code: 'return 1' })).status).toBeGreaterThanOrEqual(500);
      await until(
        async () =>
          (await api.metric('codecall_store_failures_total{kind="disk_full"}')) >= 4 ? true : null,
        'four counted failures',
      );
      expect(await api.metric('codecall_store_fault{kind="disk_full"}')).toBe(1);
      expect(lines.filter((l) => l.includes('SQLITE_FULL'))).toHaveLength(1);

      disk.free();
      await until(async () => ((await api.get('/readyz')).status === 200 ? true : null), '/readyz 200');
      expect(lines.filter((l) => l.startsWith('store recovered'))).toHaveLength(1);
      expect(await api.get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
      expect(await api.metric('codecall_store_fault{kind="disk_full"}')).toBe(0);
      expect((await api.run('return 7 * 6')).result).toMatchObject({ output: 42 });
    } finally {
      await service.close();
    }
  });

  it('a server started on a read-only database refuses to start with STORE_UNAVAILABLE and never says it serves; once writable it starts', async () => {
    // With -wal/-shm left by a crash SQLite opens the file read-only; without them it cannot open it at all.
    for (const [kind, crashed] of [
      ['read_only', true],
      ['cannot_open', false],
    ] as const) {
      const disk = mountSmallDisk(4 << 20);
      onTestFinished(() => disk.unmount());
      const db = join(disk.dir, 'tasks.db');
      await (await createSqliteTaskStore({ path: db })).close();
      if (crashed) crashWhileOpen(db);
      disk.readOnly();
      const config = loadConfig({ env: {}, flags: { port: '0', db, insecureNoAuth: true, python: false } });
      const lines: string[] = [];
      await expect(startService(config, { log: (line) => lines.push(line) })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        details: { kind },
      });
      expect(lines.filter((l) => /serving|store /.test(l))).toEqual([]);
      disk.writable();
      const service = await startService(config, { log: (line) => lines.push(line) });
      try {
        expect(await client(service.address).get('/readyz')).toMatchObject({ status: 200 });
      } finally {
        await service.close();
      }
    }
  });

  it('read-only: a store opened on a read-only disk is not ready (read_only), logged once; once the disk is writable it reconnects by itself', async () => {
    const disk = mountSmallDisk(4 << 20);
    onTestFinished(() => disk.unmount());
    const path = join(disk.dir, 'tasks.db');
    await (await createSqliteTaskStore({ path })).close();
    crashWhileOpen(path);
    disk.readOnly();
    const events: StoreHealthEvent[] = [];
    const store = await createSqliteTaskStore({ path, onHealth: (e) => events.push(e) });
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    const runtime = createRuntime({ store, drivers: [driver], tools: new ToolRegistry([]), pollMs: 50 });
    runtime.start();
    const app = buildServer({ runtime, store });
    const api = client(await app.listen({ port: 0, host: '127.0.0.1' }));
    try {
      const notReady = await api.get('/readyz');
      expect(notReady).toMatchObject({
        status: 503,
        body: { error: { code: 'STORE_UNAVAILABLE', details: { kind: 'read_only' } } },
      });
      expect(JSON.stringify(notReady.body)).toContain('read-only');
      for (let i = 0; i < 3; i++) {
        expect((await api.post({ code: 'return 1' })).status).toBeGreaterThanOrEqual(500);
        expect((await api.get('/readyz')).status).toBe(503);
      }
      expect((await api.get('/healthz')).body).toMatchObject({ status: 'degraded' });
      expect(events.filter((e) => e.type === 'failed').length).toBeGreaterThanOrEqual(4);
      expect(events.filter((e) => e.type === 'fault')).toEqual([
        { type: 'fault', fault: expect.objectContaining({ kind: 'read_only' }) as unknown },
      ]);

      disk.writable();
      await until(async () => ((await api.get('/readyz')).status === 200 ? true : null), '/readyz 200');
      expect(events.filter((e) => e.type === 'recovered')).toHaveLength(1);
      expect((await api.run('return 6 * 7')).result).toMatchObject({ output: 42 });
    } finally {
      await app.close();
      await runtime.close();
      await driver.close();
      await store.close();
    }
  });
});

describe('store faults without root', () => {
  it('busy: a connection holding the write lock past the busy timeout makes /readyz 503 (busy), reported once; released, 200', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-busy-'));
    const path = join(dir, 'tasks.db');
    const events: StoreHealthEvent[] = [];
    const store = await createSqliteTaskStore({ path, busyTimeoutMs: 100, onHealth: (e) => events.push(e) });
    const runtime = createRuntime({ store, drivers: [], tools: new ToolRegistry([]) });
    const app = buildServer({ runtime, store });
    const api = client(await app.listen({ port: 0, host: '127.0.0.1' }));
    const other = new Database(path);
    try {
      expect((await api.get('/readyz')).status).toBe(200);
      other.exec('BEGIN EXCLUSIVE');
      const busy = await until(async () => {
        const r = await api.get('/readyz');
        return r.status === 503 ? r : null;
      }, '/readyz 503');
      expect(busy.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE', details: { kind: 'busy' } } });
      await until(
        () => Promise.resolve(events.filter((e) => e.type === 'failed').length >= 3 ? true : null),
        'three failed probes',
      );
      expect(events.filter((e) => e.type === 'fault')).toHaveLength(1);
      other.exec('ROLLBACK');
      await until(async () => ((await api.get('/readyz')).status === 200 ? true : null), '/readyz 200');
      expect(events.filter((e) => e.type === 'recovered')).toHaveLength(1);
    } finally {
      other.close();
      await app.close();
      await runtime.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('corrupt: a damaged page makes /readyz 503 (corrupt), reported once, and a probe that commits does not clear it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-corrupt-'));
    const path = join(dir, 'tasks.db');
    const seeded = await createSqliteTaskStore({ path });
    await seeded.createTask(
      { kind: 'code', code: 'return 1', language: 'javascript', seed: 1 },
      { id: 'task_damaged' },
    );
    await seeded.close();
    // Garbage over the first bytes of the tasks table's root page: SQLite reads it as a malformed image.
    const raw = new Database(path);
    const { rootpage } = raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'tasks'").get() as {
      rootpage: number;
    };
    const pageSize = Number(raw.pragma('page_size', { simple: true }));
    raw.close();
    const file = await open(path, 'r+');
    await file.write(Buffer.alloc(64, 0xff), 0, 64, (rootpage - 1) * pageSize);
    await file.close();
    const events: StoreHealthEvent[] = [];
    // No cache: every /readyz probes (commits).
    const store = await createSqliteTaskStore({ path, healthCacheMs: 0, onHealth: (e) => events.push(e) });
    const runtime = createRuntime({ store, drivers: [], tools: new ToolRegistry([]) });
    const app = buildServer({ runtime, store });
    const api = client(await app.listen({ port: 0, host: '127.0.0.1' }));
    try {
      expect((await api.get('/api/v1/tasks/task_damaged')).status).toBe(500);
      for (let i = 0; i < 5; i++) {
        const r = await api.get('/readyz');
        expect(r).toMatchObject({ status: 503, body: { error: { details: { kind: 'corrupt' } } } });
      }
      expect((await api.get('/api/v1/tasks/task_damaged')).status).toBe(500);
      expect(events.filter((e) => e.type === 'fault')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'recovered')).toEqual([]);
      // Only the two reads failed: the probes committed, and did not clear the fault.
      expect(events.filter((e) => e.type === 'failed')).toHaveLength(2);
    } finally {
      await app.close();
      await runtime.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
