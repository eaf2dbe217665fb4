import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

// GET /readyz answers for the service: ready while its store answers and it is not shutting down.

describe('GET /readyz', () => {
  it('is 200 while ready, 503 while shutting down and 503 once the store is closed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-readyz-'));
    const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const runtime = createRuntime({ store, drivers: [], tools: new ToolRegistry([]) });
    let accepting = true;
    const app = buildServer({ runtime, store, ready: () => accepting });
    try {
      expect((await app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
      accepting = false;
      const closing = await app.inject({ url: '/readyz' });
      expect(closing.statusCode).toBe(503);
      expect(closing.json()).toMatchObject({ error: { code: 'SHUTDOWN' } });
      accepting = true;
      await store.close();
      const closed = await app.inject({ url: '/readyz' });
      expect(closed.statusCode).toBe(503);
      expect(closed.json()).toMatchObject({ error: { code: 'STORE_CLOSED' } });
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is 503 STARTING while the service is starting (its sandboxes not ready), then 200', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-readyz-'));
    const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const runtime = createRuntime({ store, drivers: [], tools: new ToolRegistry([]) });
    let starting = true;
    const app = buildServer({ runtime, store, starting: () => starting });
    try {
      const early = await app.inject({ url: '/readyz' });
      expect(early.statusCode).toBe(503);
      expect(early.json()).toMatchObject({ error: { code: 'STARTING' } });
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
      starting = false;
      expect((await app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
    } finally {
      await app.close();
      await runtime.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
