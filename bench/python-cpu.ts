// CPU per python execution (issue 26 goal 4, ADR 0061): executions 4 at once on a pool of 4, with the CPU of the
// host process and of each sandbox's process tree (read from /proc just before the driver kills it). On a busy
// machine the rate is the neighbours' as much as ours; the CPU per execution is ours, and 2,000 ms over it is what
// two idle cores could run. With BENCH_BASELINE_ROOT=<an older checkout, built> the two builds alternate round by
// round in this process; this build also runs with fork servers (forkServer: true, ADR 0061), whose sandboxes live
// across executions: the CPU of every sandbox tree is read before and after each round (and as any is killed).
// Usage: npm run bench:python:cpu (BENCH_QUICK=1 for fewer rounds).
import { readdirSync, readFileSync } from 'node:fs';
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
  readonly forkServer: boolean;
  readonly usage: typeof Watchdog.sandboxUsage;
  sandboxMs: number;
  readonly rate: number[];
  readonly host: number[];
  readonly sandbox: number[];
}

/** The CPU so far of every sandbox this process has (bwrap's children), by its tree. */
function treesMs(usage: typeof Watchdog.sandboxUsage): number {
  let ms = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && stat.includes('(bwrap)')) ms += usage(Number(entry)).cpuMs;
    } catch {
      // Gone.
    }
  }
  return ms;
}

let measuring: Build | null = null;

async function load(name: string, dist: string): Promise<Build[]> {
  const url = (file: string) => pathToFileURL(join(dist, file)).href;
  const driver = (await import(url('internal.js'))) as typeof Internal;
  const { PythonProcess } = (await import(url('sandbox/python/python-process.js'))) as typeof ProcessModule;
  const { sandboxUsage } = (await import(url('sandbox/python/watchdog.js'))) as typeof Watchdog;
  const build = (suffix: string, forkServer: boolean): Build => ({
    name: name + suffix,
    driver,
    forkServer,
    usage: sandboxUsage,
    sandboxMs: 0,
    rate: [],
    host: [],
    sandbox: [],
  });
  // Measurement only: the tree's CPU as the kill ends it (bwrap, the interpreter, what the program started).
  const proto = PythonProcess.prototype as { kill: (this: Proc) => void };
  const kill = proto.kill;
  proto.kill = function (this: Proc) {
    if (this.pid !== undefined && this.alive && measuring)
      measuring.sandboxMs += sandboxUsage(this.pid).cpuMs;
    kill.call(this);
  };
  return [build('', false), build(', fork servers', true)];
}

const builds = [...(await load('this build', resolve('dist')))];
const baseline = process.env.BENCH_BASELINE_ROOT;
if (baseline) builds.push(...(await load(`baseline ${baseline}`, resolve(baseline, 'dist'))).slice(0, 1));
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
    const pool = build.driver.createPythonDriver({
      warm: 4,
      probe,
      ...(build.forkServer ? { forkServer: true } : {}),
    });
    await pool.ready();
    await new Promise((r) => setTimeout(r, 300));
    measuring = build;
    const sandbox0 = build.sandboxMs + treesMs(build.usage);
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
    await new Promise((r) => setTimeout(r, 50)); // the last fork servers' change to the next execution
    const sandbox1 = build.sandboxMs + treesMs(build.usage);
    measuring = null;
    await pool.close();
    build.rate.push(EXECS / (wall / 1000));
    build.host.push((cpu.user + cpu.system) / 1000 / EXECS);
    build.sandbox.push((sandbox1 - sandbox0) / EXECS);
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
