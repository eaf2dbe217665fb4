// Per-task tool budgets (issue 21, ADR 0044), end to end: the quickjs driver, the runtime and a SQLite file. A call
// past a budget fails in the guest with TOOL_BUDGET_EXCEEDED and never runs; what a task used is counted from its
// journal, so a replay never counts a call twice and a resumed task has what it had left.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Runtime, TaskView } from '../../src/api/index.ts';
import type { JournalEntry, JournalEntryInput, TaskBudgets, ToolDefinition } from '../../src/internal.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';

const anyNumber: unknown = expect.any(Number);

const intents = (journal: readonly JournalEntry[]) =>
  journal.flatMap((e) => (e.type === 'tool_intent' ? [e.data] : []));

/** Tools whose runs are recorded in `ran`. */
function toolset(ran: string[], options: { pagesCost?: (pages: number) => number } = {}): ToolDefinition[] {
  const cost = options.pagesCost ?? ((pages: number) => pages);
  return [
    defineTool({
      name: 'search',
      description: 'Searches.',
      input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      effect: 'read',
      budget: { maxCalls: 5 },
      async execute(a) {
        const { q } = a as { q: string };
        // A later call may settle first: admission is in call order all the same.
        await sleep(q === 'b' ? 30 : 1);
        ran.push(`search ${q}`);
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
    defineTool({
      namespace: 'web',
      name: 'fetch_page',
      description: 'Fetches pages.',
      input: { type: 'object', properties: { pages: { type: 'number' } }, required: ['pages'] },
      effect: 'read',
      cost: (a) => cost((a as { pages: number }).pages),
      execute: (a) => {
        ran.push(`fetch ${(a as { pages: number }).pages}`);
        return (a as { pages: number }).pages;
      },
    }),
    defineTool({
      name: 'slow',
      description: 'Takes 150 ms.',
      effect: 'read',
      async execute() {
        await sleep(150);
        ran.push('slow');
        return 'slow';
      },
    }),
  ];
}

/** A program that calls `call` (an expression of `i`) n times, each failure as what the guest caught. */
const tries = (n: number, call: string) => `
  const out = [];
  for (let i = 0; i < ${n}; i++) {
    try {
      out.push(await ${call});
    } catch (e) {
      out.push({ code: e.code, toolError: e instanceof ToolError, ...e.details });
    }
  }
  return out;`;

const refused = (budget: string, tool: string, limit: number, used: number) => ({
  code: 'TOOL_BUDGET_EXCEEDED',
  toolError: true,
  budget,
  tool,
  limit,
  used,
});

describe('tool budgets', () => {
  const fx = useDurableFixture('tool-budgets');
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  const make = (tools: readonly ToolDefinition[]): Runtime => {
    const r = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry(tools),
      pollMs: 20,
    });
    runtimes.push(r);
    r.start();
    return r;
  };
  const run = async (runtime: Runtime, code: string, budgets?: TaskBudgets): Promise<TaskView> => {
    const { task_id } = await runtime.submit({ code, ...(budgets ? { constraints: { budgets } } : {}) });
    return runtime.wait(task_id);
  };

  it("refuses a tool's calls past its budget: the task's tightens the declared one, the smaller wins", async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran));
    const tight = await run(runtime, tries(5, "tools.search({ q: 'q' + i })"), {
      tools: { 'tools.search': { maxCalls: 3 } },
    });
    expect(tight.status).toBe('succeeded');
    expect(tight.result?.output).toEqual([
      'q0',
      'q1',
      'q2',
      refused('tool_max_calls', 'tools.search', 3, 3),
      refused('tool_max_calls', 'tools.search', 3, 3),
    ]);
    expect(ran).toEqual(['search q0', 'search q1', 'search q2']);
    // The refused calls are journaled as refused, with their failure as the outcome; no idempotency key.
    const journal = await fx.store.readJournal(tight.task_id);
    expect(intents(journal).map((i) => i.over_budget ?? null)).toEqual([
      null,
      null,
      null,
      'tool_max_calls',
      'tool_max_calls',
    ]);
    expect(intents(journal).filter((i) => i.over_budget && i.idempotency_key)).toEqual([]);
    expect(tight.budgets).toEqual({
      tools: { 'tools.search': { max_calls: 3 } },
      used: { calls: 3, cost: 3, tools: { 'tools.search': { calls: 3, wall_seconds: anyNumber } } },
    });

    ran.length = 0;
    // A looser task budget does not loosen the tool's own (5).
    const loose = await run(runtime, tries(7, "tools.search({ q: 'q' + i })"), {
      tools: { 'tools.search': { maxCalls: 10 } },
    });
    expect(loose.result?.output).toEqual([
      'q0',
      'q1',
      'q2',
      'q3',
      'q4',
      refused('tool_max_calls', 'tools.search', 5, 5),
      refused('tool_max_calls', 'tools.search', 5, 5),
    ]);
    expect(ran).toHaveLength(5);
    // Without budgets of its own a task has the tool's, and no budgets in its view.
    const plain = await run(runtime, tries(6, "tools.search({ q: 'q' + i })"));
    expect((plain.result?.output as unknown[]).at(-1)).toEqual(
      refused('tool_max_calls', 'tools.search', 5, 5),
    );
    expect(plain.budgets).toBeUndefined();
  });

  it('refuses any call past the total max_calls, whatever its tool', async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran));
    const view = await run(
      runtime,
      `${tries(2, "tools.search({ q: 'q' + i })").replace('return out;', '')}
      for (let i = 0; i < 2; i++) {
        try { out.push(await tools.note({})); } catch (e) { out.push({ code: e.code, budget: e.details.budget, tool: e.details.tool }); }
      }
      return out;`,
      { maxCalls: 3 },
    );
    expect(view.result?.output).toEqual([
      'q0',
      'q1',
      'noted',
      { code: 'TOOL_BUDGET_EXCEEDED', budget: 'max_calls', tool: 'tools.note' },
    ]);
    expect(ran).toEqual(['search q0', 'search q1', 'note']);
    expect(view.budgets?.used).toMatchObject({
      calls: 3,
      tools: { 'tools.search': { calls: 2 }, 'tools.note': { calls: 1 } },
    });
  });

  it('sums costs computed from the arguments against max_cost, and journals each cost with its call', async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran));
    const view = await run(runtime, tries(4, 'web.fetch_page({ pages: [4, 5, 3, 1][i] })'), { maxCost: 10 });
    expect(view.result?.output).toEqual([
      4,
      5,
      { ...refused('max_cost', 'web.fetch_page', 10, 9), cost: 3 },
      1,
    ]);
    expect(ran).toEqual(['fetch 4', 'fetch 5', 'fetch 1']);
    const journal = await fx.store.readJournal(view.task_id);
    // A cost of 1 is the default: not written.
    expect(intents(journal).map((i) => i.cost ?? i.over_budget ?? null)).toEqual([4, 5, 'max_cost', null]);
    expect(view.budgets).toEqual({
      max_cost: 10,
      used: {
        calls: 3,
        cost: 10,
        tools: { 'web.fetch_page': { calls: 3, wall_seconds: anyNumber } },
      },
    });
  });

  it('refuses new calls once the time of the completed ones reaches max_wall_seconds (a running call is not cut)', async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran));
    const view = await run(runtime, tries(4, 'tools.slow({})'), {
      tools: { 'tools.slow': { maxWallSeconds: 0.2 } },
    });
    const out = view.result?.output as unknown[];
    // 0 s used: runs (150 ms); ~0.15 s: runs (the budget is not cut mid-call); ~0.3 s: refused.
    expect(out.slice(0, 2)).toEqual(['slow', 'slow']);
    expect(out.slice(2)).toEqual([
      expect.objectContaining({ code: 'TOOL_BUDGET_EXCEEDED', budget: 'tool_max_wall_seconds', limit: 0.2 }),
      expect.objectContaining({ budget: 'tool_max_wall_seconds' }),
    ]);
    expect((out[2] as { used: number }).used).toBeGreaterThanOrEqual(0.29);
    expect(ran).toEqual(['slow', 'slow']);
    expect(view.budgets?.used?.tools['tools.slow']?.wall_seconds).toBeGreaterThanOrEqual(0.29);
  });

  it('admits the calls of a Promise.all in call order: with 2 left of 3, exactly the first 2 run', async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran));
    const code = `
      await tools.search({ q: 'a' });
      const all = await Promise.allSettled(['b', 'c', 'd'].map((q) => tools.search({ q })));
      return all.map((r) => (r.status === 'fulfilled' ? r.value : r.reason.code + ' ' + r.reason.details.used));`;
    for (let round = 0; round < 4; round++) {
      ran.length = 0;
      const view = await run(runtime, code, { tools: { 'tools.search': { maxCalls: 3 } } });
      expect(view.result?.output).toEqual(['b', 'c', 'TOOL_BUDGET_EXCEEDED 3']);
      // 'b' settles last, yet 'd' (the third asked) is the one refused.
      expect(ran).toEqual(['search a', 'search c', 'search b']);
      const journal = await fx.store.readJournal(view.task_id);
      // By call id: a read's intent is journaled with its outcome (ADR 0047, amended 2026-12-07), so in settle order.
      const byCall = intents(journal).sort((x, y) => x.call_id.localeCompare(y.call_id));
      expect(byCall.map((i) => [i.call_id, i.over_budget ?? null])).toEqual([
        ['call-1', null],
        ['call-2', null],
        ['call-3', null],
        ['call-4', 'tool_max_calls'],
      ]);
    }
  });

  it('a paused and resumed task has what it had left, counted from its journal at the costs journaled', async () => {
    const ran: string[] = [];
    const code = `
      await web.fetch_page({ pages: 4 });
      await web.fetch_page({ pages: 5 });
      await input.wait('go');
      ${tries(3, 'web.fetch_page({ pages: 0.5 })')}`;
    const first = make(toolset(ran));
    const { task_id } = await first.submit({ code, constraints: { budgets: { maxCalls: 4, maxCost: 10 } } });
    const paused = await first.wait(task_id);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'awaiting_input' });
    expect(paused.budgets).toMatchObject({ max_calls: 4, max_cost: 10, used: { calls: 2, cost: 9 } });
    await first.close();

    // Another runtime, whose tool now costs twice as much: the past stays at the costs its journal holds (9), so
    // the first new call (1) fits and the next (1 more) does not.
    ran.length = 0;
    const second = make(toolset(ran, { pagesCost: (pages) => pages * 2 }));
    await second.provideInput(task_id, 'go', true);
    const done = await second.wait(task_id);
    expect(done.status).toBe('succeeded');
    expect(done.result?.output).toEqual([
      0.5,
      { ...refused('max_cost', 'web.fetch_page', 10, 10), cost: 1 },
      { ...refused('max_cost', 'web.fetch_page', 10, 10), cost: 1 },
    ]);
    // The replayed calls did not run again.
    expect(ran).toEqual(['fetch 0.5']);
    expect(done.budgets?.used).toMatchObject({ calls: 3, cost: 10 });
  });

  it('a recovered task counts a call lost in a crash once: replayed, rerun, then refused', async () => {
    const ran: string[] = [];
    const code = tries(5, "tools.search({ q: 'q' + i })");
    const task = await fx.store.createTask({
      kind: 'code',
      code,
      language: 'javascript',
      seed: 1,
      constraints: { budgets: { tools: { 'tools.search': { maxCalls: 3 } } } },
    });
    const call = (n: number): JournalEntryInput[] => [
      {
        type: 'tool_intent',
        data: { call_id: `call-${n}`, tool: 'tools.search', args: `{"q":"q${n - 1}"}` },
      },
      { type: 'tool_outcome', data: { call_id: `call-${n}`, ok: true, payload: `"q${n - 1}"` } },
    ];
    // A worker died with two calls done and the third running (intent, no outcome).
    const lost = call(3)[0] as JournalEntryInput;
    await journalAsDeadWorker(fx.store, task.id, [...call(1), ...call(2), lost]);
    // Started after the dead worker's claim, so it recovers the task rather than running it first.
    const runtime = make(toolset(ran));
    const view = await runtime.wait(task.id, { until: 'terminal' });
    expect(view.result?.output).toEqual([
      'q0',
      'q1',
      'q2',
      refused('tool_max_calls', 'tools.search', 3, 3),
      refused('tool_max_calls', 'tools.search', 3, 3),
    ]);
    // Only the lost call ran again (a read: recovery runs it again), counted once.
    expect(ran).toEqual(['search q2']);
    expect(view.budgets?.used).toMatchObject({ calls: 3, tools: { 'tools.search': { calls: 3 } } });
  });

  it('a refusal whose outcome a crash lost is refused again: the call never runs, nor waits for a human', async () => {
    const ran: string[] = [];
    const task = await fx.store.createTask({
      kind: 'code',
      code: tries(2, "tools.search({ q: 'q' + i })"),
      language: 'javascript',
      seed: 1,
      constraints: { budgets: { maxCalls: 1 } },
    });
    // The dead worker ran call-1, then journaled call-2's refusal and died before its outcome.
    await journalAsDeadWorker(fx.store, task.id, [
      { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.search', args: '{"q":"q0"}' } },
      { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '"q0"' } },
      {
        type: 'tool_intent',
        data: { call_id: 'call-2', tool: 'tools.search', args: '{"q":"q1"}', over_budget: 'max_calls' },
      },
    ]);
    const runtime = make(toolset(ran));
    const view = await runtime.wait(task.id, { until: 'terminal' });
    expect(view.result?.output).toEqual(['q0', refused('max_calls', 'tools.search', 1, 1)]);
    expect(ran).toEqual([]);
  });

  it('replays a journal with refusals to the same outcome, counting nothing twice (metrics too)', async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran));
    const metrics = createMetrics({ store: fx.store, runtime, processMetrics: false });
    // Refusals before a pause; the resume replays them from the journal, then makes one more.
    const code = `
      const out = [];
      for (let i = 0; i < 3; i++) try { out.push(await tools.note({})); } catch (e) { out.push(e.details.budget); }
      await input.wait('go');
      try { out.push(await tools.note({})); } catch (e) { out.push(e.details.budget); }
      return out;`;
    const { task_id } = await runtime.submit({ code, constraints: { budgets: { maxCalls: 1 } } });
    expect(await runtime.wait(task_id)).toMatchObject({ status: 'paused' });
    const before = intents(await fx.store.readJournal(task_id));
    await runtime.provideInput(task_id, 'go', null);
    const view = await runtime.wait(task_id);
    expect(view.result?.output).toEqual(['noted', 'max_calls', 'max_calls', 'max_calls']);
    expect(ran).toEqual(['note']);
    const after = intents(await fx.store.readJournal(task_id));
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.map((i) => i.over_budget ?? null)).toEqual([
      null,
      'max_calls',
      'max_calls',
      null,
      'max_calls',
    ]);
    expect(view.budgets?.used).toMatchObject({ calls: 1 });
    const text = await metrics.registry.getSingleMetricAsString('codecall_tool_budget_refusals_total');
    expect(text).toContain('codecall_tool_budget_refusals_total{tool="tools.note",budget="max_calls"} 3');
    metrics.close();
  });

  it('fails a call whose cost function throws (it never runs, a call at cost 0)', async () => {
    const ran: string[] = [];
    const runtime = make(toolset(ran, { pagesCost: () => Number.NaN }));
    const view = await run(runtime, tries(1, 'web.fetch_page({ pages: 2 })'), { maxCost: 5 });
    expect(view.result?.output).toEqual([{ code: 'TOOL_ERROR', toolError: true }]);
    expect(ran).toEqual([]);
    expect(view.budgets?.used).toMatchObject({ calls: 1, cost: 0 });
  });

  it('lists a task with its budgets and no usage (a list reads no journal)', async () => {
    const runtime = make(toolset([]));
    const view = await run(runtime, 'return 1', { maxCalls: 2 });
    const page = await runtime.listItems({});
    const listed = page.tasks.find((t) => t.task_id === view.task_id);
    expect(listed?.budgets).toEqual({ max_calls: 2, used: null });
    expect(view.budgets).toEqual({ max_calls: 2, used: { calls: 0, cost: 0, tools: {} } });
  });

  it('refuses bad budgets at submit, naming the wire field', async () => {
    const runtime = make(toolset([]));
    const cases: [unknown, string][] = [
      [{ maxCalls: -1 }, 'tool_constraints.budgets.max_calls'],
      [{ maxCalls: 1.5 }, 'tool_constraints.budgets.max_calls'],
      [{ maxCost: Number.NaN }, 'tool_constraints.budgets.max_cost'],
      [{ max_call: 2 }, 'tool_constraints.budgets'],
      [{ tools: { search: { maxCalls: 1 } } }, 'tool_constraints.budgets.tools["search"]'],
      [{ tools: { 'egress.read': { maxCalls: 1 } } }, 'tool_constraints.budgets.tools["egress.read"]'],
      [{ tools: { 'tools.search': { calls: 1 } } }, 'tool_constraints.budgets.tools["tools.search"]'],
      [
        { tools: { 'tools.search': { maxWallSeconds: -2 } } },
        'tool_constraints.budgets.tools["tools.search"].max_wall_seconds',
      ],
      ['3', 'tool_constraints.budgets'],
    ];
    for (const [budgets, field] of cases) {
      const submitted = runtime.submit({
        code: 'return 1',
        constraints: { budgets: budgets as TaskBudgets },
      });
      await expect(submitted, JSON.stringify(budgets)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field },
      });
    }
  });

  it('refuses a bad declared budget or cost when the tool is defined', () => {
    const tool = (more: Record<string, unknown>) => () =>
      defineTool({ name: 't', description: '', execute: () => 1, ...more });
    expect(tool({ budget: { maxCalls: -1 } })).toThrow(
      expect.objectContaining({ details: { field: 'budget.maxCalls' } }),
    );
    expect(tool({ budget: { maxWallSeconds: 'x' } })).toThrow(
      expect.objectContaining({ details: { field: 'budget.maxWallSeconds' } }),
    );
    expect(tool({ budget: { calls: 1 } })).toThrow(
      expect.objectContaining({ details: { field: 'budget.calls' } }),
    );
    expect(tool({ cost: -1 })).toThrow(expect.objectContaining({ details: { field: 'cost' } }));
    expect(tool({ cost: 2, budget: { maxCalls: 0 } })).not.toThrow();
  });
});
