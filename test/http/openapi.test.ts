import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import { payTool } from './api-fixture.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// GET /api/v1/openapi.json: generated from the route schemas; and those response schemas, which fastify
// serializes with, drop no field of what the routes return.

interface Operation {
  responses?: Record<string, unknown>;
  parameters?: { in: string; name: string; required?: boolean }[];
  security?: unknown[];
}
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
  security: unknown[];
}

describe('OpenAPI document and response schemas', () => {
  const fx = useDurableFixture('openapi');
  let runtime: Runtime;
  let app: ReturnType<typeof buildServer>;
  const routes: { method: string; url: string }[] = [];

  beforeAll(async () => {
    const tools = new ToolRegistry([payTool()]);
    runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools, pollMs: 20 });
    runtime.start();
    const metrics = createMetrics({ store: fx.store, runtime, processMetrics: false });
    app = buildServer({ runtime, store: fx.store, metrics });
    // The routes are registered by plugins loaded at ready(), so this sees all of them.
    app.addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  const post = (url: string, payload: unknown) =>
    app.inject({ method: 'POST', url, payload: payload as object });
  async function until(id: string, status: string): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if ((await runtime.get(id))?.status === status) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never became ${status}`);
  }
  /** What the client sees of a view: JSON, with its undefined fields gone. */
  const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

  it('documents every /api/v1 route with its responses, and a bearer security scheme', async () => {
    const res = await app.inject({ url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<OpenApiDoc>();
    const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info).toMatchObject({ title: 'codecall', version });
    expect(doc.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.any(String) as unknown,
    });
    expect(doc.security).toEqual([{ bearer: [] }]);

    const api = routes.filter((r) => r.url.startsWith('/api/v1/'));
    expect(api.length).toBeGreaterThanOrEqual(9);
    for (const { method, url } of api) {
      const path = url.replace(/:(\w+)/g, '{$1}');
      const op = doc.paths[path]?.[method.toLowerCase()];
      expect(op, `${method} ${path}`).toBeDefined();
      const codes = Object.keys(op?.responses ?? {});
      expect(
        codes.some((c) => /^2/.test(c)),
        `${method} ${path} has a 2xx response`,
      ).toBe(true);
      expect(codes, `${method} ${path}`).toContain('4XX');
      // Every path parameter is declared.
      for (const [, name] of url.matchAll(/:(\w+)/g)) {
        expect(op?.parameters, `${method} ${path}`).toContainEqual(
          expect.objectContaining({ in: 'path', name, required: true }),
        );
      }
    }
    // The service routes outside /api/v1 are there too; the probes need no key, the metrics do (ADR 0032).
    for (const path of ['/healthz', '/readyz']) expect(doc.paths[path]?.get?.security).toEqual([]);
    expect(doc.paths['/metrics']?.get?.security).toBeUndefined();

    // Every $ref points into components.schemas.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    }
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['TaskView', 'Error']));
  });

  it('sends every field of the task view, the list, the creation and the error envelope', async () => {
    const created = await post('/api/v1/tasks', {
      code: "console.log('hi'); return { paid: await tools.pay({ amount: 5 }), n: [1, 2.5, null] };",
      metadata: { team: 'a', nested: { deep: [1, { x: true }] } },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json<{ task_id: string }>();
    expect(Object.keys(body).sort()).toEqual(['created_at', 'status', 'task_id']);
    await until(body.task_id, 'succeeded');
    const got = await app.inject({ url: `/api/v1/tasks/${body.task_id}` });
    expect(got.json()).toEqual(asJson(await runtime.get(body.task_id)));

    // A paused task: pending approvals with their arguments.
    const waiting = (await post('/api/v1/tasks', { code: 'return await tools.pay({ amount: 500 });' })).json<{
      task_id: string;
    }>().task_id;
    await until(waiting, 'paused');
    const paused = (await app.inject({ url: `/api/v1/tasks/${waiting}` })).json<Record<string, unknown>>();
    expect(paused).toEqual(asJson(await runtime.get(waiting)));
    expect(paused.pending_approvals).toMatchObject([{ tool: 'tools.pay', arguments: { amount: 500 } }]);

    const list = (await app.inject({ url: '/api/v1/tasks' })).json<{ tasks: unknown[] }>();
    expect(list).toEqual(asJson(await runtime.list()));

    const events = (await app.inject({ url: `/api/v1/tasks/${body.task_id}/events` })).json<{
      events: { source: string; data: unknown }[];
    }>();
    const journal = await fx.store.readJournal(body.task_id);
    const fromJournal = events.events.filter((e) => e.source === 'journal');
    expect(fromJournal.map((e) => e.data)).toEqual(asJson(journal.map((e) => e.data)));
    const audit = await fx.store.readAudit(body.task_id);
    const fromAudit = events.events.filter((e) => e.source === 'audit');
    expect(fromAudit.map((e) => e.data)).toEqual(asJson(audit.map((e) => e.data)));

    const conflict = await post(`/api/v1/tasks/${body.task_id}/control`, { action: 'cancel' });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toEqual({
      error: {
        code: 'ILLEGAL_TRANSITION',
        message: expect.any(String) as unknown,
        details: { status: 'succeeded' },
      },
    });
    const decided = await post(`/api/v1/tasks/${waiting}/approvals/nope`, { decision: 'approve' });
    // The envelope's details name what the caller can decide instead: the pending approvals.
    expect(decided.statusCode).toBe(400);
    expect(decided.json<{ error: { details: unknown } }>().error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { pending: ['call-1'] },
    });
  });
});
