// What the tool budgets (ADR 0044) cost per tool call, in one run:
//
// - end to end: N sequential calls of a trivial tool in one durable task (quickjs, SQLite with synchronous=FULL),
//   with no budgets and with every kind at once (a total max_calls and max_cost, the tool's own max_calls and
//   max_wall_seconds, a cost computed from the arguments and journaled with each call); rounds alternate, and the
//   difference of the medians per call is printed. A journaled call costs tens of microseconds (two commits), so
//   the difference is within the noise of the machine: the second figure is the one that isolates the check.
// - the check alone: BudgetLedger.admit and the fold of the call's intent and outcome (what the JournalingHost runs
//   per call when a task has budgets), against the same loop without them, per call.
//
// Usage: npm run bench:budgets (BENCH_QUICK=1 for fewer rounds).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BudgetLedger,
  createQuickJsDriver,
  createRuntime,
  createSqliteTaskStore,
  defineTool,
  ToolRegistry,
} from '../dist/internal.js';
import type { HostCall, JournalEntryInput, TaskBudgets } from '../dist/internal.js';
import { busyShare, interference, machineTicks, processTicks } from './machine.ts';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = QUICK ? 300 : 2000;
const ROUNDS = QUICK ? 3 : 7;
const CHECKS = QUICK ? 200_000 : 2_000_000;

const ping = defineTool({
  name: 'ping',
  description: 'Answers at once.',
  input: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
  effect: 'read',
  cost: (a) => 1 + ((a as { i: number }).i % 3),
  budget: { maxCalls: 10 * N, maxWallSeconds: 3600 },
  execute: (a) => (a as { i: number }).i,
});
const budgets: TaskBudgets = {
  maxCalls: 10 * N,
  maxCost: 100 * N,
  tools: { 'tools.ping': { maxCalls: 10 * N, maxWallSeconds: 3600 } },
};

// End to end: a durable task of N sequential calls.
const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-budgets-'));
const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const driver = createQuickJsDriver({ workers: 1 });
await driver.ready();
// A tool without a declared budget for the run without budgets (a declared one bounds every task).
const plainPing = defineTool({ ...ping, name: 'ping', cost: undefined, budget: undefined });
const runtimes = {
  without: createRuntime({ store, drivers: [driver], tools: new ToolRegistry([plainPing]), pollMs: 10 }),
  with: createRuntime({ store, drivers: [driver], tools: new ToolRegistry([ping]), pollMs: 10 }),
};
const code = `for (let i = 0; i < ${N}; i++) await tools.ping({ i }); return ${N};`;

async function task(kind: 'with' | 'without'): Promise<number> {
  const runtime = runtimes[kind];
  const { task_id } = await runtime.submit({
    code,
    ...(kind === 'with' ? { constraints: { budgets } } : {}),
  });
  const started = performance.now();
  const view = await runtime.run(task_id);
  const ms = performance.now() - started;
  if (view.status !== 'succeeded' || view.result?.output !== N)
    throw new Error(`task ${kind}: ${view.status}`);
  if (kind === 'with' && view.budgets?.used?.calls !== N)
    throw new Error('the budgets did not count the calls');
  return (ms * 1000) / N;
}

await task('without');
await task('with');
const before = await busyShare(1000);
const e2e = { with: [] as number[], without: [] as number[] };
const [machine0, self0, t0] = [machineTicks(), processTicks(false), performance.now()];
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
    e2e[kind].push(await task(kind));
  }
}
const [machine1, self1] = [machineTicks(), processTicks(false)];
const others =
  machine0 && machine1 && self0 !== null && self1 !== null
    ? interference(machine0, machine1, self1 - self0, performance.now() - t0).otherCpuShare
    : null;
await runtimes.with.close();
await runtimes.without.close();
await driver.close();
await store.close();
await rm(dir, { recursive: true, force: true });

// The check alone: what the JournalingHost does per call for the budgets (admit, then fold the intent it journals
// and its outcome, each at the host's clock), against the same loop without a ledger.
const registry = new ToolRegistry([
  defineTool({ ...ping, budget: { maxCalls: CHECKS * 2, maxWallSeconds: 3600 } }),
]);
function checks(ledger: BudgetLedger | null): number {
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < CHECKS; i++) {
    const callId = `call-${i}`;
    const call: HostCall = { kind: 'tool', callId, namespace: 'tools', name: 'ping', args: { i } };
    let cost: number | undefined;
    if (ledger) {
      const admission = ledger.admit(call);
      if (admission.kind !== 'run') throw new Error('refused');
      cost = admission.cost;
    }
    // The intent and the outcome as the host builds them, with or without budgets.
    const intent: JournalEntryInput = {
      type: 'tool_intent',
      data: { call_id: callId, tool: 'tools.ping', args: '{}', ...(cost === undefined ? {} : { cost }) },
    };
    const outcome: JournalEntryInput = {
      type: 'tool_outcome',
      data: { call_id: callId, ok: true, payload: '1' },
    };
    if (ledger) {
      ledger.journaled([intent], Date.now());
      ledger.journaled([outcome], Date.now());
    } else sink += intent.type.length + outcome.type.length + call.callId.length;
  }
  if (sink < 0) throw new Error('unreachable');
  return ((performance.now() - started) * 1e6) / CHECKS;
}
const unbounded: TaskBudgets = {
  maxCalls: CHECKS * 2,
  maxCost: CHECKS * 10,
  tools: { 'tools.ping': { maxCalls: CHECKS * 2, maxWallSeconds: 3600 } },
};
checks(null);
checks(BudgetLedger.of(unbounded, registry, []));
const micro = { with: [] as number[], without: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  micro.without.push(checks(null));
  micro.with.push(checks(BudgetLedger.of(unbounded, registry, [])));
}

const us = (n: number): string => n.toFixed(2);
const e2eWith = median(e2e.with);
const e2eWithout = median(e2e.without);
const checkNs = median(micro.with) - median(micro.without);
const share = (x: number | null): string => (x === null ? 'n/a' : x.toFixed(2));
console.log(
  `budget check per tool call (${os.cpus().length} cores, Node ${process.version}; machine busy ${share(before)} ` +
    `before, other processes ${share(others)} of the CPU during the durable rounds)`,
);
console.log(`durable task, ${N} sequential calls, median of ${ROUNDS} rounds, us per call:`);
console.log(`  without budgets  ${us(e2eWithout)}   (rounds: ${e2e.without.map(us).join(', ')})`);
console.log(`  with budgets     ${us(e2eWith)}   (rounds: ${e2e.with.map(us).join(', ')})`);
console.log(
  `  difference       ${us(e2eWith - e2eWithout)} us per call (${((e2eWith / e2eWithout - 1) * 100).toFixed(1)}%)`,
);
console.log(`the check alone (admit, fold intent and outcome), ${CHECKS} calls, median of ${ROUNDS}:`);
console.log(
  `  ${us(checkNs / 1000)} us per call (${checkNs.toFixed(0)} ns; target < 2 us: ${checkNs < 2000 ? 'met' : 'missed'})`,
);
