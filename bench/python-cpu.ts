// CPU per python execution (issue 26 goal 4, ADR 0061): executions 4 at once on a pool of 4, with the CPU of the
// host process and of each sandbox's process tree (read from /proc just before the driver kills it). On a busy
// machine the rate is the neighbours' as much as ours; the CPU per execution is ours, and 2,000 ms over it is what
// two idle cores could run. With BENCH_BASELINE_ROOT=<an older checkout, built> the two builds alternate round by
// round in this process. Usage: npm run bench:python:cpu (BENCH_QUICK=1 for fewer rounds).
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Internal from '../dist/internal.js';
import type { HostCall } from '../dist/internal.js';
import type * as ProcessModule from '../dist/sandbox/python/python-process.js';
import type { PythonProcess as Proc } from '../dist/sandbox/python/python-process.js';
import type * as Watchdog from '../dist/sandbox/python/watchdog.js';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 2 : 4;
const EXECS = QUICK ? 20 : 60;

interface Build {
  readonly name: string;
  readonly driver: typeof Internal;
  sandboxMs: number;
  readonly rate: number[];
  readonly host: number[];
  readonly sandbox: number[];
}

async function load(name: string, dist: string): Promise<Build> {
  const url = (file: string) => pathToFileURL(join(dist, file)).href;
  const driver = (await import(url('internal.js'))) as typeof Internal;
  const { PythonProcess } = (await import(url('sandbox/python/python-process.js'))) as typeof ProcessModule;
  const { sandboxUsage } = (await import(url('sandbox/python/watchdog.js'))) as typeof Watchdog;
  const build: Build = { name, driver, sandboxMs: 0, rate: [], host: [], sandbox: [] };
  // Measurement only: the tree's CPU as the kill ends it (bwrap, the interpreter, what the program started).
  const proto = PythonProcess.prototype as { kill: (this: Proc) => void };
  const kill = proto.kill;
  proto.kill = function (this: Proc) {
    if (this.pid !== undefined && this.alive) build.sandboxMs += sandboxUsage(this.pid).cpuMs;
    kill.call(this);
  };
  return build;
}

const builds = [await load('this build', resolve('dist'))];
const baseline = process.env.BENCH_BASELINE_ROOT;
if (baseline) builds.push(await load(`baseline ${baseline}`, resolve(baseline, 'dist')));
const probe = await builds[0]!.driver.probePython();
if (!probe.ok) {
  console.log(`python cpu benchmark skipped: ${probe.reason}`);
  process.exit(0);
}
const host = { call: (_: HostCall) => Promise.resolve({ ok: true as const, value: 1 }) };
const loads: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const build of round % 2 ? [...builds].reverse() : builds) {
    loads.push(os.loadavg()[0] ?? 0);
    const pool = build.driver.createPythonDriver({ warm: 4, probe });
    await pool.ready();
    await new Promise((r) => setTimeout(r, 300));
    const sandbox0 = build.sandboxMs;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next++ < EXECS) {
          const r = await pool.execute({ code: '1 + 1', language: 'python', tools: [], host });
          if (r.status !== 'succeeded') throw new Error(JSON.stringify(r));
        }
      }),
    );
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await pool.close();
    build.rate.push(EXECS / (wall / 1000));
    build.host.push((cpu.user + cpu.system) / 1000 / EXECS);
    build.sandbox.push((build.sandboxMs - sandbox0) / EXECS);
  }
}
console.log(
  `python cpu benchmark${QUICK ? ' (BENCH_QUICK=1)' : ''}: ${os.availableParallelism()} x ${os.cpus()[0]?.model ?? 'cpu'}, load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}; ${ROUNDS} rounds of ${EXECS} executions, 4 at once, pool of 4, medians`,
);
for (const b of builds) {
  const total = median(b.host) + median(b.sandbox);
  console.log(
    `${b.name.padEnd(24)} ${median(b.rate).toFixed(1)}/s  CPU per execution: host ${median(b.host).toFixed(2)} ms + sandbox ${median(b.sandbox).toFixed(2)} ms = ${total.toFixed(2)} ms -> ${(2000 / total).toFixed(0)}/s on two idle cores (target >= 100/s)`,
  );
}
