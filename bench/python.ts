// Python sandbox benchmark (issue 6): warm-pool execution and cold start of the python driver, side by side with
// bare `python3 -c pass` and bare `bwrap <the same sandbox> python3 -c pass`; tool-call round trips per second
// inside one execution; executions per second. Runs the built package (dist/). Usage: npm run bench:python
// (BENCH_QUICK=1 for a short run).
import { spawn } from 'node:child_process';
import os from 'node:os';
import { createPythonDriver, probePython } from '../dist/internal.js';
import type { HostCall, ReplayStep } from '../dist/internal.js';
import { encodeOutcome } from '../dist/codec/index.js';
import { bwrapArgs } from '../dist/sandbox/python/bwrap-args.js';
import { median, percentile } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = QUICK ? 10 : 40;
const CALLS = QUICK ? 2_000 : 10_000;
const EXECS = QUICK ? 40 : 200;

const probe = await probePython();
if (!probe.ok) {
  console.log(`python benchmark skipped: ${probe.reason}`);
  process.exit(0);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const root = process.getuid?.() === 0;

function runProcess(file: string, args: readonly string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore', ...(root ? { uid: 65534, gid: 65534 } : {}) });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - t0));
  });
}

const host = {
  call: (c: HostCall) =>
    Promise.resolve(
      c.kind === 'timer' ? { ok: true as const, value: null } : { ok: true as const, value: 1 },
    ),
};
const tools = [{ namespace: 'tools', name: 'one' }];
const request = (code: string) => ({ code, language: 'python' as const, tools, host });

// Bare interpreters, for scale, interleaved with the driver's cold starts (one at a time, alternately: the load
// of a busy machine falls on both alike).
const args = bwrapArgs({
  python: probe.pythonPath,
  workspaceBytes: 64 * 1024 * 1024,
  safePathFlag: probe.safePathFlag,
});
// The same sandbox running the interpreter as a user would (with site: -B -s -P, no -S), the reference of the
// cold-start ratio, and with the driver's own flags (-S: no site), the interpreter's floor (ADR 0061).
const flagsAt = args.indexOf(probe.pythonPath) + 1;
const bareArgs = [
  ...args.slice(0, flagsAt),
  ...args.slice(flagsAt, args.indexOf('-c')).filter((f) => f !== '-S'),
  '-c',
  'pass',
];
const bareNoSiteArgs = [...args.slice(0, args.indexOf('-c') + 1), 'pass'];
// Cold: no warm pool, every execution starts its sandbox.
const cold = createPythonDriver({ warm: 0 });
await cold.ready();
const bare: number[] = [];
const bareBwrap: number[] = [];
const bareNoSite: number[] = [];
const coldTimes: number[] = [];
const loads: number[] = [os.loadavg()[0] ?? 0];
for (let i = 0; i < N; i++) {
  bare.push(await runProcess(probe.pythonPath, ['-c', 'pass']));
  bareBwrap.push(await runProcess(probe.bwrapPath, bareArgs));
  bareNoSite.push(await runProcess(probe.bwrapPath, bareNoSiteArgs));
  const t0 = performance.now();
  const r = await cold.execute(request('print(1)'));
  if (r.status !== 'succeeded') throw new Error(JSON.stringify(r));
  coldTimes.push(performance.now() - t0);
  await sleep(30); // the last sandbox's cgroup is ended meanwhile
}
await cold.close();
loads.push(os.loadavg()[0] ?? 0);

// Warm: the pool has an interpreter waiting (a pause lets it refill between executions), a fresh sandbox per
// execution against fork servers (ADR 0061), alternately.
const warm = createPythonDriver({ warm: 2 });
const warmFork = createPythonDriver({ warm: 2, forkServer: true });
await Promise.all([warm.ready(), warmFork.ready()]);
const warmTimes: number[] = [];
const warmForkTimes: number[] = [];
const timed = async (driver: typeof warm) => {
  await sleep(60);
  const t0 = performance.now();
  const r = await driver.execute(request('print(1)'));
  if (r.status !== 'succeeded') throw new Error(JSON.stringify(r));
  return performance.now() - t0;
};
for (let i = 0; i < N; i++) {
  warmTimes.push(await timed(warm));
  warmForkTimes.push(await timed(warmFork));
}
await warmFork.close();

// Tool calls inside one execution.
await sleep(100);
const t0 = performance.now();
const loop = await warm.execute(request(`for _ in range(${CALLS}):\n    tools.one()\n${CALLS}`));
const loopMs = performance.now() - t0;
if (loop.status !== 'succeeded') throw new Error(JSON.stringify(loop));

// Replay: the same calls served from a replay script inside the sandbox, against served by the host.
const REPLAYED = QUICK ? 200 : 1_000;
const replayCode = `for i in range(${REPLAYED}):\n    tools.one(i=i)\n${REPLAYED}`;
const recorded: ReplayStep[] = [];
const recording = await warm.execute({
  ...request(replayCode),
  host: {
    call: (c: HostCall) => {
      if (c.kind === 'tool') {
        const { ok, payload } = encodeOutcome({ ok: true, value: 1 }, 'tools.one');
        recorded.push({ callId: c.callId, tool: 'tools.one', args: c.argsJson ?? '', ok, payload, clock: 0 });
      }
      return Promise.resolve({ ok: true as const, value: 1 });
    },
  },
});
if (recording.status !== 'succeeded') throw new Error(JSON.stringify(recording));
const scriptedTimes: number[] = [];
const hostedTimes: number[] = [];
for (let i = 0; i < (QUICK ? 3 : 7); i++) {
  await sleep(100);
  let t = performance.now();
  const s = await warm.execute({ ...request(replayCode), replay: recorded });
  scriptedTimes.push(performance.now() - t);
  await sleep(100);
  t = performance.now();
  const h = await warm.execute(request(replayCode));
  hostedTimes.push(performance.now() - t);
  if (s.status !== 'succeeded' || h.status !== 'succeeded') throw new Error(JSON.stringify([s, h]));
}
await warm.close();

// Executions per second, 4 at once, pool of 4: fresh sandboxes and fork servers, in alternate rounds.
const pool = createPythonDriver({ warm: 4 });
const forkPool = createPythonDriver({ warm: 4, forkServer: true });
await Promise.all([pool.ready(), forkPool.ready()]);
const ROUNDS = 4;
const stream = async (driver: typeof pool, n: number) => {
  const e0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next++ < n) {
        const r = await driver.execute(request('1 + 1'));
        if (r.status !== 'succeeded') throw new Error(JSON.stringify(r));
      }
    }),
  );
  return performance.now() - e0;
};
let freshMs = 0;
let forkMs = 0;
for (let round = 0; round < ROUNDS; round++) {
  freshMs += await stream(pool, EXECS / ROUNDS);
  await sleep(200);
  forkMs += await stream(forkPool, EXECS / ROUNDS);
  await sleep(200);
}
const execsPerSec = EXECS / (freshMs / 1000);
const forkExecsPerSec = EXECS / (forkMs / 1000);
await Promise.all([pool.close(), forkPool.close()]);
loads.push(os.loadavg()[0] ?? 0);

const ms = (xs: number[]) =>
  `${median(xs).toFixed(1)} ms (p90 ${percentile(
    [...xs].sort((a, b) => a - b),
    90,
  ).toFixed(1)})`;
console.log(
  `python benchmark${QUICK ? ' (BENCH_QUICK=1)' : ''}: ${os.availableParallelism()} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, cpython ${probe.python}, bwrap ${probe.bwrap}`,
);
console.log(`bare python3 -c pass                ${ms(bare)}`);
console.log(
  `load average (1 min) ${loads.map((l) => l.toFixed(2)).join(' -> ')} on ${os.availableParallelism()} cores`,
);
console.log(`bare bwrap (same sandbox) python3   ${ms(bareBwrap)}`);
console.log(`bare bwrap, python3 -S (no site)    ${ms(bareNoSite)}`);
console.log(
  `driver cold start, print(1)         ${ms(coldTimes)}   ratio to bare bwrap ${(median(coldTimes) / median(bareBwrap)).toFixed(2)} (target <= 1.1), to -S ${(median(coldTimes) / median(bareNoSite)).toFixed(2)}`,
);
console.log(`driver warm pool, print(1)          ${ms(warmTimes)}   (target p50 <= 2 ms)`);
console.log(
  `  fork servers (forkServer: true)   ${ms(warmForkTimes)}   ratio to fresh sandboxes ${(median(warmForkTimes) / median(warmTimes)).toFixed(2)}`,
);
console.log(
  `tool-call round trips               ${Math.round(CALLS / (loopMs / 1000))}/s (target >= 5,000/s)`,
);
console.log(`executions, 4 at once, pool of 4    ${execsPerSec.toFixed(0)}/s (target >= 100/s)`);
console.log(
  `  fork servers (forkServer: true)   ${forkExecsPerSec.toFixed(0)}/s   ratio to fresh sandboxes ${(forkExecsPerSec / execsPerSec).toFixed(2)}`,
);
console.log(
  `replay of ${REPLAYED} calls: script ${median(scriptedTimes).toFixed(1)} ms, host ${median(hostedTimes).toFixed(1)} ms (ratio ${(median(scriptedTimes) / median(hostedTimes)).toFixed(2)})`,
);
