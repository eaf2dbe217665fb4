// Per-tenant rate limits and quotas on tool calls (issue 21, ADR 0045), end to end: the quickjs driver, the
// runtime and SQLite files. A call past its tenant's limit fails in the guest with TOOL_RATE_LIMITED or
// TOOL_QUOTA_EXCEEDED and `retry_after_seconds`, runs nothing and takes nothing; what was taken is in the store,
// shared by runtimes on one file; a replay takes nothing again.
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Runtime, RuntimeOptions } from '../../src/index.ts';
import type { JournalEntry, TaskStore, ToolDefinition } from '../../src/internal.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';

const intents = (journal: readonly JournalEntry[]) =>
  journal.flatMap((e) => (e.type === 'tool_intent' ? [e.data] : []));

function toolset(ran: string[]): ToolDefinition[] {
  return [
    defineTool({
      name: 'search',
      description: 'Searches.',
      input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      effect: 'read',
      async execute(a) {
        const { q } = a as { q: string };
        // A later call may settle first: admission is in call order all the same.
        await new Promise((r) => setTimeout(r, q === 'a' ? 30 : 1));
        ran.push(q);
        return q;
      },
    }),
    defineTool({
      name: 'note',
      description: 'Notes.',
      effect: 'idempotent',
      execute: () => {
        ran.push('note');
        return 'noted';
      },
    }),
  ];
}

/** What the guest caught, as it saw it. */
const caught = `(e) => ({ code: e.code, toolError: e instanceof ToolError, ...e.details })`;

describe('tenant rate limits and quotas', () => {
  // One file for the whole suite: each case limits a tenant of its own.
  const fx = useDurableFixture('tenant-limits');
  const runtimes: Runtime[] = [];
  const stores: TaskStore[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  const make = (
    ran: string[],
    limits: Pick<RuntimeOptions, 'toolRateLimits' | 'toolQuotas'>,
    store: TaskStore = fx.store,
  ): Runtime => {
    const r = createRuntime({
      store,
      drivers: [fx.driver],
      tools: new ToolRegistry(toolset(ran)),
      pollMs: 20,
      ...limits,
    });
    runtimes.push(r);
    r.start();
    return r;
  };

  it('refuses a call past the rate with retry_after_seconds; the program waits that long and the call runs', async () => {
    const ran: string[] = [];
    const runtime = make(ran, {
      toolRateLimits: [{ tenant: 'acme', tool: 'tools.search', rate: 4, per: 'second', burst: 2 }],
    });
    const metrics = createMetrics({ store: fx.store, runtime, processMetrics: false });
    const code = `
      const out = [];
      for (const q of ['a', 'b', 'c']) {
        for (;;) {
          try {
            out.push(await tools.search({ q }));
            break;
          } catch (e) {
            const seen = (${caught})(e);
            out.push(seen);
            if (e.code !== 'TOOL_RATE_LIMITED') throw e;
            await new Promise((r) => setTimeout(r, e.details.retry_after_seconds * 1000));
          }
        }
      }
      out.push(await tools.note({}));
      return out;`;
    const { task_id } = await runtime.submit({ code, tenant: 'acme' });
    const view = await runtime.wait(task_id);
    expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
    const output = view.result?.output as unknown[];
    expect(output.slice(0, 2)).toEqual(['a', 'b']);
    const refusal = output[2] as Record<string, unknown>;
    expect(refusal).toMatchObject({
      code: 'TOOL_RATE_LIMITED',
      toolError: true,
      tool: 'tools.search',
      limit: 'rate',
      rate: 4,
      per: 'second',
      burst: 2,
    });
    expect(refusal.retry_after_seconds).toBeGreaterThan(0);
    expect(refusal.retry_after_seconds).toBeLessThanOrEqual(0.25);
    expect(output.slice(-2)).toEqual(['c', 'noted']);
    expect(ran.sort()).toEqual(['a', 'b', 'c', 'note']);
    // Refused calls are journaled as refused, with no idempotency key; the tool without a rule is not limited.
    const journal = await fx.store.readJournal(task_id);
    const refused = intents(journal).filter((i) => i.over_budget === 'tenant_rate');
    expect(refused.length).toBe(output.length - 4);
    expect(refused.every((i) => i.idempotency_key === undefined)).toBe(true);
    const text = await metrics.registry.getSingleMetricAsString('codecall_tool_limit_refusals_total');
    expect(text).toContain(
      `codecall_tool_limit_refusals_total{tool="tools.search",limit="rate"} ${refused.length}`,
    );
    metrics.close();

    // Another tenant is under no rule: its calls are not limited.
    const other = await runtime.wait(
      (
        await runtime.submit({
          code: `return Promise.all([1, 2, 3, 4].map((i) => tools.search({ q: 'g' + i })))`,
          tenant: 'globex',
        })
      ).task_id,
    );
    expect(other.result?.output).toEqual(['g1', 'g2', 'g3', 'g4']);
  });

  it('admits the calls of one Promise.all in call order: with two tokens, the first two run', async () => {
    const ran: string[] = [];
    const runtime = make(ran, {
      toolRateLimits: [{ tenant: '*', tool: '*', rate: 1, per: 'hour', burst: 2 }],
    });
    const code = `return Promise.all(['a', 'b', 'c'].map((q) => tools.search({ q }).catch(${caught})))`;
    const view = await runtime.wait((await runtime.submit({ code })).task_id);
    const output = view.result?.output as unknown[];
    expect(output.slice(0, 2)).toEqual(['a', 'b']);
    expect(output[2]).toMatchObject({ code: 'TOOL_RATE_LIMITED', tool: 'tools.search' });
    // About an hour per token (3600 s), the next one a little sooner.
    expect((output[2] as { retry_after_seconds: number }).retry_after_seconds).toBeGreaterThan(3590);
    expect(ran.sort()).toEqual(['a', 'b']);
  });

  it('holds a quota over two runtimes on one SQLite file, each on a connection of its own', async () => {
    const ran: string[] = [];
    const toolQuotas = [{ tenant: 'acme', tool: 'tools.search', max: 3, period: 'day' as const }];
    const second = await createSqliteTaskStore({ path: fx.path });
    stores.push(second);
    const a = make(ran, { toolQuotas });
    const b = make(ran, { toolQuotas }, second);
    const code = `try { return await tools.search({ q: 'x' }); } catch (e) { return (${caught})(e); }`;
    const ids = await Promise.all(
      Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? a : b).submit({ code, tenant: 'acme' })),
    );
    const outputs = await Promise.all(
      ids.map(({ task_id }) => a.wait(task_id).then((v) => v.result?.output)),
    );
    expect(outputs.filter((o) => o === 'x')).toHaveLength(3);
    const refusals = outputs.filter((o) => o !== 'x') as Record<string, unknown>[];
    expect(refusals).toHaveLength(2);
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    for (const r of refusals) {
      expect(r).toMatchObject({
        code: 'TOOL_QUOTA_EXCEEDED',
        toolError: true,
        limit: 'quota',
        max: 3,
        period: 'day',
      });
      // Until the next UTC day.
      expect(Math.abs((r.retry_after_seconds as number) - (midnight - Date.now()) / 1000)).toBeLessThan(60);
    }
    expect(ran).toHaveLength(3);
  });

  it('takes nothing again when a paused task resumes: its replayed calls were taken once', async () => {
    const ran: string[] = [];
    const runtime = make(ran, {
      toolRateLimits: [{ tenant: 'initech', tool: 'tools.search', rate: 1, per: 'hour', burst: 3 }],
    });
    const code = `
      const out = [await tools.search({ q: 'a' }), await tools.search({ q: 'b' })];
      await input.wait('go');
      for (const q of ['c', 'd']) {
        try { out.push(await tools.search({ q })); } catch (e) { out.push(e.code); }
      }
      return out;`;
    const { task_id } = await runtime.submit({ code, tenant: 'initech' });
    expect(await runtime.wait(task_id)).toMatchObject({ status: 'paused', pause_reason: 'awaiting_input' });
    await runtime.provideInput(task_id, 'go', null);
    const view = await runtime.wait(task_id);
    expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
    // Three tokens: a and b before the pause (not taken again by the replay), c after; d is refused.
    expect(view.result?.output).toEqual(['a', 'b', 'c', 'TOOL_RATE_LIMITED']);
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('recovers a crashed task without taking again: a lost call reruns on its token, a lost refusal stays one', async () => {
    const ran: string[] = [];
    const code = `const out = [];
      for (const q of ['a', 'b', 'c', 'd']) {
        try { out.push(await tools.search({ q })); } catch (e) { out.push([e.code, e.details.retry_after_seconds]); }
      }
      return out;`;
    const task = await fx.store.createTask(
      { kind: 'code', code, language: 'javascript', seed: 1 },
      { attributes: { tenant: 'hooli' } },
    );
    // The dead worker ran call-1, journaled call-2's refusal (lost its outcome), then call-3 (lost, a read).
    const intent = (n: number, q: string, more = {}) => ({
      type: 'tool_intent' as const,
      data: { call_id: `call-${n}`, tool: 'tools.search', args: JSON.stringify({ q }), ...more },
    });
    await journalAsDeadWorker(fx.store, task.id, [
      intent(1, 'a'),
      { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '"a"' } },
      intent(2, 'b', { over_budget: 'tenant_rate' }),
      intent(3, 'c'),
    ]);
    // One token in the bucket: the rerun of call-3 must not take it (its intent holds the one it took), so d gets it.
    const runtime = make(ran, {
      toolRateLimits: [{ tenant: 'hooli', tool: '*', rate: 1, per: 'hour', burst: 1 }],
    });
    const view = await runtime.wait(task.id, { until: 'terminal' });
    expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
    expect(view.result?.output).toEqual(['a', ['TOOL_RATE_LIMITED', 0], 'c', 'd']);
    expect(ran.sort()).toEqual(['c', 'd']);
  });
});
