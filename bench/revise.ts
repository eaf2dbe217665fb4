// Fix and continue (issue 18, ADR 0034): a program makes 100 tool calls of 20 ms each and then fails; it is fixed
// and run again. Timed: the fixed program as a revision of the failed task (`revisionOf`: the calls the failed
// attempt completed are taken over from its journal, only what is new runs) against the same fixed program run
// fresh as a new task. No peer carries outcomes across revisions, so the fresh run is what a peer does (and what
// codecall did before issue 18): every call runs again.
//
// Real SQLite file in a temp dir (synchronous=FULL), the quickjs driver with 2 workers, the python driver when the
// machine has one (bubblewrap). Tools: `pay` (unsafe: a payment ledger) and `balance` (read), both sleep 20 ms and
// count every execution. Each round checks that the revision succeeded, delivered each call the value its own call
// got in the failed attempt and ran none of them again (the fix adds no call, so the revision runs no tool at all);
// a repeated call exits non-zero.
//
// Runs the built package (dist/). Usage: npm run bench:revise (BENCH_QUICK=1 for a short run).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createPythonDriver,
  createQuickJsDriver,
  createSqliteTaskStore,
  decodeValue,
  defineTool,
  probePython,
  TaskRunner,
  ToolRegistry,
} from '../dist/internal.js';
import type { SandboxDriver, TaskRecord, TaskStore } from '../dist/internal.js';
import { interference, machineTicks, processTicks } from './machine.ts';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 2 : 5;
const CALLS = 100;
const GROUP = 10;
const TOOL_MS = 20;
const GOAL_RATIO = 0.1;

type Language = 'javascript' | 'python';
type Shape = 'sequential' | 'groups';

// ---- The tools: every execution is counted, with its arguments, by round and phase. ----

interface Execution {
  readonly key: string;
  readonly value: unknown;
}
/** Executions of the current phase (the failed attempt, the revision, the fresh run). */
let executions: Execution[] = [];

/** The arguments in canonical form (keys sorted), so `{a, b}` and `{b, a}` are one call. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

let receipts = 0;
const pay = defineTool({
  name: 'pay',
  description: 'pays an invoice (a payment ledger: running it twice pays twice)',
  effect: 'unsafe',
  execute: async (args) => {
    const value = { receipt: `r${++receipts}` };
    executions.push({ key: `pay ${canonical(args)}`, value });
    await sleep(TOOL_MS);
    return value;
  },
});
const balance = defineTool({
  name: 'balance',
  description: 'reads the balance of an account',
  effect: 'read',
  execute: async (args) => {
    const value = 1_000_000 - receipts;
    executions.push({ key: `balance ${canonical(args)}`, value });
    await sleep(TOOL_MS);
    return value;
  },
});

// ---- The programs. Call i is a read every tenth call, else a payment; `tag` keeps each round's calls apart. ----

/**
 * The k-th call a group issues (g: the group): in the order written (the failed attempt), or the fix's order,
 * another one for each group (3 is prime to 10: a permutation).
 */
const order = (fixed: boolean): string => (fixed ? `(k * 3 + g) % ${GROUP}` : 'k');

function javascript(shape: Shape, tag: string, fixed: boolean): string {
  const call = `const call = (i) => i % 10 === 9
    ? tools.balance({ account: 'main', tag: '${tag}', after: i })
    : tools.pay({ tag: '${tag}', invoice: i, cents: 100 + i });`;
  const body =
    shape === 'sequential'
      ? `for (let i = 0; i < ${CALLS}; i++) out.push(await call(i));`
      : `for (let g = 0; g < ${CALLS / GROUP}; g++) {
    const idx = Array.from({ length: ${GROUP} }, (_, k) => g * ${GROUP} + ${order(fixed)});
    const rs = await Promise.all(idx.map(call));
    idx.forEach((i, j) => { out[i] = rs[j]; });
  }`;
  // The failure: a typo after the last call ("fails at the end"). The fix: the name spelled right.
  const end = `const total = out.length;\nreturn { out, total: ${fixed ? 'total' : 'totl'} };`;
  return `${call}\nconst out = [];\n${body}\n${end}`;
}

function python(shape: Shape, tag: string, fixed: boolean): string {
  const call = `def call(i):
    if i % 10 == 9:
        return tools.balance(account='main', tag='${tag}', after=i)
    return tools.pay(tag='${tag}', invoice=i, cents=100 + i)
def call_async(i):
    if i % 10 == 9:
        return tools.balance_async(account='main', tag='${tag}', after=i)
    return tools.pay_async(tag='${tag}', invoice=i, cents=100 + i)`;
  const body =
    shape === 'sequential'
      ? `out = [call(i) for i in range(${CALLS})]`
      : `import asyncio
out = [None] * ${CALLS}
for g in range(${CALLS / GROUP}):
    idx = [g * ${GROUP} + ${order(fixed)} for k in range(${GROUP})]
    rs = await asyncio.gather(*[call_async(i) for i in idx])
    for i, r in zip(idx, rs):
        out[i] = r`;
  const end = `total = len(out)\n{'out': out, 'total': ${fixed ? 'total' : 'totl'}}`;
  return `${call}\n${body}\n${end}`;
}

const program = (language: Language, shape: Shape, tag: string, fixed: boolean): string =>
  language === 'javascript' ? javascript(shape, tag, fixed) : python(shape, tag, fixed);

/** The key of call i as the tools count it (the same arguments the programs pass). */
function callKey(i: number, tag: string): string {
  return i % 10 === 9
    ? `balance ${canonical({ account: 'main', tag, after: i })}`
    : `pay ${canonical({ tag, invoice: i, cents: 100 + i })}`;
}

// ---- Setup. ----

const probe = await probePython();
const dir = await mkdtemp(join(os.tmpdir(), 'codecall-bench-revise-'));
const store: TaskStore = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const quickjs = createQuickJsDriver({ workers: 2 });
const drivers: SandboxDriver[] = [quickjs];
if (probe.ok) drivers.push(createPythonDriver({ warm: 2, probe }));
await Promise.all(drivers.map((d) => d.ready()));
const runner = new TaskRunner({
  store,
  drivers,
  tools: new ToolRegistry([pay, balance]),
  owner: 'bench',
  leaseMs: 60_000,
});

async function run(
  language: Language,
  code: string,
  revisionOf?: string,
): Promise<{ task: TaskRecord; ms: number; executed: Execution[] }> {
  executions = [];
  const started = performance.now();
  const created = await store.createTask({
    kind: 'code',
    code,
    language,
    seed: 1,
    ...(revisionOf === undefined ? {} : { revisionOf }),
  });
  const task = await runner.runTask(created.id);
  const ms = performance.now() - started;
  if (!task) throw new Error(`task ${created.id} was not run`);
  return { task, ms, executed: executions };
}

interface Round {
  readonly revisionMs: number;
  readonly freshMs: number;
  /** Tool executions during the revision: new calls, and calls the failed attempt had already run. */
  readonly newCalls: number;
  readonly repeated: number;
  /** Calls the revision's journal holds as taken over (`carried_from`). */
  readonly carried: number;
  readonly freshCalls: number;
}

const failures: string[] = [];
let rounds = 0;

async function round(language: Language, shape: Shape): Promise<Round> {
  const tag = `${language}-${shape}-${++rounds}`;
  const label = `${language} ${shape} round ${rounds}`;
  // 1. The program fails after its 100 calls.
  const first = await run(language, program(language, shape, tag, false));
  if (first.task.status !== 'failed')
    throw new Error(`${label}: the first attempt ended ${first.task.status}`);
  if (first.executed.length !== CALLS) {
    throw new Error(`${label}: the first attempt ran ${first.executed.length} calls`);
  }
  const firstValues = new Map(first.executed.map((e) => [e.key, e.value]));
  const fixed = program(language, shape, tag, true);

  // 2. The fix as a revision of the failed task, and 3. the same fix run fresh (what a peer does). Alternated.
  const revise = () => run(language, fixed, first.task.id);
  const fresh = () => run(language, fixed);
  let revision: Awaited<ReturnType<typeof run>>;
  let freshRun: Awaited<ReturnType<typeof run>>;
  if (rounds % 2 === 0) {
    revision = await revise();
    freshRun = await fresh();
  } else {
    freshRun = await fresh();
    revision = await revise();
  }
  for (const [what, r] of [
    ['revision', revision],
    ['fresh run', freshRun],
  ] as const) {
    if (r.task.status !== 'succeeded') {
      throw new Error(`${label}: the ${what} ended ${r.task.status}: ${JSON.stringify(r.task.error)}`);
    }
  }
  const repeated = revision.executed.filter((e) => firstValues.has(e.key)).length;
  if (repeated > 0) failures.push(`${label}: the revision ran ${repeated} calls the failed attempt had run`);
  // Each call got the value its own call got the first time (a reordered group included).
  const result = decodeValue(revision.task.result ?? 'null') as { out: unknown[]; total: number };
  const wrong = Array.from({ length: CALLS }, (_, i) => i).filter(
    (i) => canonical(result.out[i]) !== canonical(firstValues.get(callKey(i, tag))),
  );
  if (wrong.length > 0 || result.total !== CALLS) {
    failures.push(
      `${label}: the revision's result differs from the failed attempt's values at calls ${wrong.join(', ')} (total ${result.total})`,
    );
  }
  const journal = await store.readJournal(revision.task.id);
  const carried = journal.filter((e) => e.type === 'tool_intent' && e.data.carried_from !== undefined).length;
  return {
    revisionMs: revision.ms,
    freshMs: freshRun.ms,
    newCalls: revision.executed.length - repeated,
    repeated,
    carried,
    freshCalls: freshRun.executed.length,
  };
}

// ---- Scenarios. ----

interface Scenario {
  readonly name: string;
  readonly language: Language;
  readonly shape: Shape;
}
const scenarios: Scenario[] = [
  { name: '(a) sequential, javascript', language: 'javascript', shape: 'sequential' },
  {
    name: `(b) ${CALLS / GROUP} x Promise.all(${GROUP}), reordered, javascript`,
    language: 'javascript',
    shape: 'groups',
  },
  { name: '(c) sequential, python', language: 'python', shape: 'sequential' },
  {
    name: `(c) ${CALLS / GROUP} x asyncio.gather(${GROUP}), reordered, python`,
    language: 'python',
    shape: 'groups',
  },
];

console.log(
  `bench:revise${QUICK ? ' (BENCH_QUICK=1: 2 rounds)' : ''}: ${os.availableParallelism()} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}; ` +
    `${CALLS} calls of ${TOOL_MS} ms, then a failure; the fix as a revision vs the same fix run fresh, ${ROUNDS} rounds each`,
);
console.log(
  'No peer carries completed calls across revisions: the fresh run is what a peer (or codecall before issue 18) does ' +
    'when a fixed program is run again, every call executed once more.',
);
if (!probe.ok) console.log(`(c) python skipped: ${probe.reason}`);

const fmt = (xs: readonly number[]): string => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `${median(sorted).toFixed(1)} (${(sorted[0] ?? NaN).toFixed(1)}-${(sorted.at(-1) ?? NaN).toFixed(1)})`;
};

interface Row {
  readonly scenario: Scenario;
  readonly rounds: readonly Round[];
}
const rows: Row[] = [];
const started = performance.now();
const [machine0, self0] = [machineTicks(), processTicks(true)];
for (const scenario of scenarios) {
  if (scenario.language === 'python' && !probe.ok) continue;
  // One round unmeasured first (JIT, the sandboxes' pools), as a long-running service would be.
  await round(scenario.language, scenario.shape);
  const measured: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) measured.push(await round(scenario.language, scenario.shape));
  rows.push({ scenario, rounds: measured });
  const rev = measured.map((r) => r.revisionMs);
  const fresh = measured.map((r) => r.freshMs);
  console.log(
    `${scenario.name}: revision ${fmt(rev)} ms, fresh ${fmt(fresh)} ms, ratio ${(median(rev) / median(fresh)).toFixed(3)}`,
  );
}
const [machine1, self1] = [machineTicks(), processTicks(true)];

// ---- The table. ----

const header = [
  'scenario',
  'revision ms p50 (min-max)',
  'fresh ms p50 (min-max)',
  'ratio p50 (max)',
  `goal < ${GOAL_RATIO}`,
  'revision: new calls run',
  'repeated',
  'taken over',
  'fresh: calls run',
];
const lines = rows.map(({ scenario, rounds: rs }) => {
  const rev = rs.map((r) => r.revisionMs);
  const fresh = rs.map((r) => r.freshMs);
  const ratio = median(rev) / median(fresh);
  const worst = Math.max(...rs.map((r) => r.revisionMs / r.freshMs));
  const one = (pick: (r: Round) => number): string => {
    const values = [...new Set(rs.map(pick))];
    return values.length === 1 ? String(values[0]) : `${Math.min(...values)}-${Math.max(...values)}`;
  };
  return [
    scenario.name,
    fmt(rev),
    fmt(fresh),
    `${ratio.toFixed(3)} (${worst.toFixed(3)})`,
    ratio < GOAL_RATIO ? 'met' : 'MISSED',
    one((r) => r.newCalls),
    one((r) => r.repeated),
    one((r) => r.carried),
    one((r) => r.freshCalls),
  ];
});
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
const pad = (cells: readonly string[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ');
console.log(`\n${pad(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}`);
for (const line of lines) console.log(pad(line));
console.log(
  `\nWall time from createTask to the task's end (claim, journal, sandbox, tools, result committed). ` +
    `The fix corrects a typo after the last call and adds none, so a revision has no new call to run; goal: 0 repeated.`,
);
if (machine0 && machine1 && self0 !== null && self1 !== null) {
  const share = interference(machine0, machine1, self1 - self0, performance.now() - started).otherCpuShare;
  console.log(`other processes took ${(100 * share).toFixed(0)}% of the machine's CPU during the rounds`);
}

await store.close();
await Promise.all(drivers.map((d) => d.close()));
await rm(dir, { recursive: true, force: true });
if (failures.length > 0) {
  console.error(`\nFAILED: a revision repeated calls or delivered wrong values:\n  ${failures.join('\n  ')}`);
  process.exitCode = 1;
}
