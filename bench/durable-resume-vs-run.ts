// Resume after N completed tool calls: codecall's journal replay against `run` 2.1.5's continuation replay.
// The same program in both: N sequential `await tools.echo({ i })`, then `await tools.hold()`, then `return 1`.
//
// - codecall: the task pauses (runner.pause) while `hold` runs; timed from `runTask` of the paused task to
//   `succeeded`: claim, journal read, replay of N outcomes in a fresh VM, `hold` live, result committed.
// - run: `hold` calls `interrupt()`, so the run ends `interrupted` with a signed continuation whose ledger holds
//   the N completed calls. Timed from `runner.run({ continuation, resolutions })` to `completed`: the token
//   verified and decoded, the N calls served from its ledger in a fresh VM, `hold` reinvoked with the resolution.
//
// The two are the same operation, with one difference the output states: codecall reads its state from a
// SQLite journal and commits the result (synchronous=FULL); run's state is the token the caller hands back, and
// run stores nothing. Runs the built package (dist/). Usage: npm run build && node --import tsx bench/durable-resume-vs-run.ts
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRunner, getHostFunctionContext, setMaxWorkers } from 'run';
import type { HostFunctions } from 'run';
import { createQuickJsDriver, createSqliteTaskStore } from '../dist/internal.js';
import type { TaskStore } from '../dist/internal.js';
import { createResumeBench, resumeProgram } from './durable-resume.ts';
import { interference, machineTicks, processTicks } from './machine.ts';
import { percentile } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const SAMPLES = QUICK ? 2 : 8;
const WORKERS = 2;
const CALLS = (process.env.BENCH_RESUME_CALLS ?? '0,100,1000').split(',').map(Number);

const program = resumeProgram;

// codecall: one SQLite store, one driver, one runner for every sample.
const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-resume-vs-run-'));
const store: TaskStore = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const driver = createQuickJsDriver({ workers: WORKERS });
await driver.ready();
const resumes = createResumeBench(store, driver);
// The same runner without kept VMs: every resume replays its journal (ADR 0010), for the A/B of ADR 0056.
const replays = createResumeBench(store, driver, { pausedVmBudgetBytes: 0 });
// The kept VM with the journal read whole, as before the 2026-12-07 amendment of ADR 0056 (its A/B).
const wholes = createResumeBench(store, driver, { wholeRead: true });
const codecallResume = (calls: number) => resumes.resume(calls, { measureRead: true });
const codecallReplay = (calls: number) => replays.resume(calls);
const codecallWhole = (calls: number) => wholes.resume(calls);

// run: one long-lived runner with a signing secret (needed for continuations), 2 workers like codecall.
setMaxWorkers(WORKERS);
const run = createRunner({ continuationSecret: randomBytes(32), limits: { timeoutMs: 60_000 } });
const hostFunctions: HostFunctions = {
  tools: {
    echo: (args: never) => args,
    hold: () => {
      const context = getHostFunctionContext();
      // interrupt() throws, so the first call ends here; the resumed run reinvokes it with the resolution.
      return context.resume === undefined ? context.interrupt({ kind: 'hold' }) : context.resume.resolution;
    },
  },
};

async function runResume(calls: number): Promise<{ ms: number; tokenBytes: number }> {
  const source = program(calls);
  // maxBridgeRequests (default 256) counts replayed calls too.
  const limits = { maxBridgeRequests: calls + 16 };
  const first = await run.run({ source, hostFunctions, limits });
  if (first.status !== 'interrupted') throw new Error(`run: expected interrupted, got ${first.status}`);
  const token = first.continuation;
  const resolutions = first.interruptions.map((x) => ({ interruptionId: x.id, value: 'released' }));
  const started = performance.now();
  const done = await run.run({ source, hostFunctions, limits, continuation: token, resolutions });
  const ms = performance.now() - started;
  if (done.status !== 'completed' || done.value !== 1) throw new Error(`run: resume ended ${done.status}`);
  return { ms, tokenBytes: Buffer.byteLength(token) };
}

// Warm-up: JIT, both worker pools, run's TypeScript transpile cache for every source.
for (const calls of CALLS) {
  await codecallResume(calls);
  await codecallReplay(calls);
  await codecallWhole(calls);
  await runResume(calls);
}
const started = performance.now();
const [machine0, self0] = [machineTicks(), processTicks(false)];
const p50 = (xs: number[]): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;
for (const calls of CALLS) {
  const ours: number[] = [];
  const replayed: number[] = [];
  const whole: number[] = [];
  const cpuWhole: number[] = [];
  const cpuKept: number[] = [];
  const cpuReplay: number[] = [];
  const theirs: number[] = [];
  const load: number[] = [];
  const reads: number[] = [];
  let entries = 0;
  let tokenBytes = 0;
  for (let i = 0; i < SAMPLES; i++) {
    // Alternate, so drift on the shared machine hits all alike; the order turns each round, so no variant always
    // follows `run` (whose workers may still be busy: process CPU counts every thread).
    load.push(loadavg()[0] ?? 0);
    const order = [0, 1, 2, 3].map((k) => (k + i) % 4);
    const got: unknown[] = [];
    for (const k of order) {
      got[k] = await [
        () => codecallResume(calls),
        () => codecallReplay(calls),
        () => codecallWhole(calls),
        () => runResume(calls),
      ][k]?.();
    }
    const [a, r, w, b] = got as [
      Awaited<ReturnType<typeof codecallResume>>,
      Awaited<ReturnType<typeof codecallReplay>>,
      Awaited<ReturnType<typeof codecallWhole>>,
      Awaited<ReturnType<typeof runResume>>,
    ];
    ours.push(a.ms);
    replayed.push(r.ms);
    whole.push(w.ms);
    cpuWhole.push(w.cpuMs);
    cpuKept.push(a.cpuMs);
    cpuReplay.push(r.cpuMs);
    theirs.push(b.ms);
    reads.push(a.readMs);
    entries = a.entries;
    tokenBytes = b.tokenBytes;
  }
  console.log(
    `resume after ${calls} completed calls: codecall p50 ${fmt(p50(ours))} from the kept paused VM, ${fmt(p50(replayed))} by replay ` +
      `(kept / replay ${(p50(ours) / p50(replayed)).toFixed(2)}; journal: ${entries} entries in SQLite, read in ${fmt(p50(reads))}), ` +
      `run continuation p50 ${fmt(p50(theirs))} (token: ${(tokenBytes / 1024).toFixed(1)} KiB, stored by the caller); ` +
      `codecall kept / run ${(p50(ours) / p50(theirs)).toFixed(2)}, replay / run ${(p50(replayed) / p50(theirs)).toFixed(2)}; ` +
      `CPU of the process p50 ${fmt(p50(cpuKept))} kept, ${fmt(p50(cpuReplay))} replay (${(p50(cpuKept) / p50(cpuReplay)).toFixed(2)}); ` +
      `kept VM with the journal read whole p50 ${fmt(p50(whole))}, CPU ${fmt(p50(cpuWhole))} (kept / kept-whole ${(p50(ours) / p50(whole)).toFixed(2)} wall, ${(p50(cpuKept) / p50(cpuWhole)).toFixed(2)} CPU); ` +
      `load average ${p50(load).toFixed(1)}`,
  );
}
console.log(`resume vs run: kept paused VMs ${JSON.stringify(resumes.runner.pausedVms?.counts ?? null)}`);
console.log(
  'resume vs run: the same operation on both sides (replay N completed calls from recorded state in a fresh VM, ' +
    'run the interrupted call, finish); codecall also claims a lease and commits the result with fsync, run stores nothing',
);
const [machine1, self1] = [machineTicks(), processTicks(false)];
if (machine0 && machine1 && self0 !== null && self1 !== null) {
  const share = interference(machine0, machine1, self1 - self0, performance.now() - started).otherCpuShare;
  console.log(
    `resume vs run: other processes took ${(100 * share).toFixed(0)}% of the CPU during the samples`,
  );
}
setMaxWorkers(undefined);
await store.close();
await driver.close();
await rm(dir, { recursive: true, force: true });
