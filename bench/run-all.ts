/**
 * `npm run bench`: measures every system, each in a process of its own, then prints the table and the
 * targets and writes bench/results/latest.json. Exits 0 when a target is missed (it is a report) and
 * non-zero only when codecall itself failed to run. BENCH_QUICK=1 for a smoke run; BENCH_SYSTEMS=a,b to
 * measure a subset; BENCH_LOAD=0.5 to measure every system a second time, right after its quiet run, beside CPU
 * burners taking that share of the machine (load.ts), and report both and their ratios.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUICK, SYSTEM_TIMEOUT_MS } from './config.ts';
import { CpuLoad, loadFromEnv } from './load.ts';
import { busyShare, interference, machineTicks, processTicks } from './machine.ts';
import type { Interference } from './machine.ts';
import { computeTargets, formatMarkdown, formatText } from './report.ts';
import type { BenchReport, SystemResult } from './results.ts';
import { SYSTEMS } from './systems/index.ts';
import type { SystemEntry } from './systems/index.ts';
import type { Phase } from './system.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);

function cpuModel(): string {
  try {
    const line = execFileSync('lscpu', { encoding: 'utf8' })
      .split('\n')
      .find((l) => l.startsWith('Model name:'));
    if (line) return line.slice('Model name:'.length).trim();
  } catch {
    // lscpu is Linux-only; fall through.
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

function revision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    return dirty === '' ? head : `${head}+dirty`;
  } catch {
    return 'unknown';
  }
}

function failed(entry: SystemEntry, why: string): SystemResult {
  const skipped = { status: 'skipped', reason: why } as const;
  return {
    id: entry.id,
    name: entry.id,
    description: '',
    unavailable: why,
    coldStart: skipped,
    toolLoop: skipped,
    throughput: skipped,
    memory: skipped,
  };
}

async function measureInChild(
  entry: SystemEntry,
  phase: Phase,
  dir: string,
  tag: string,
): Promise<SystemResult> {
  const out = path.join(dir, `${entry.id}-${phase}${tag}.json`);
  const args = [
    ...entry.nodeFlags,
    '--expose-gc',
    '--import',
    'tsx',
    path.join(here, 'run-system.ts'),
    entry.id,
    phase,
    out,
  ];
  const machineBefore = machineTicks();
  const selfBefore = processTicks(false);
  const startedAt = performance.now();
  const exit = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
    const timer = setTimeout(() => child.kill('SIGKILL'), SYSTEM_TIMEOUT_MS);
    child.on('error', (error) => resolve(error.message));
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? `killed by ${signal}` : `exit code ${code}`);
    });
  });
  const wallMs = performance.now() - startedAt;
  const machineAfter = machineTicks();
  const selfAfter = processTicks(false);
  let result: SystemResult;
  try {
    result = JSON.parse(await readFile(out, 'utf8')) as SystemResult;
  } catch {
    return failed(entry, `its benchmark process ended without a result (${exit})`);
  }
  if (
    machineBefore &&
    machineAfter &&
    selfBefore !== null &&
    selfAfter !== null &&
    result.cpuTicks !== undefined
  ) {
    result.interference = interference(
      machineBefore,
      machineAfter,
      result.cpuTicks + selfAfter - selfBefore,
      wallMs,
    );
    const { otherCpuShare, stealShare } = result.interference;
    console.log(
      `[${result.name}] ${phase} phase: other work on the machine meanwhile: ${(otherCpuShare * 100).toFixed(1)}% of its CPU, steal ${(stealShare * 100).toFixed(1)}%`,
    );
  }
  return result;
}

/** Both phases of one system, merged; a system that could not run in one phase could not run at all. */
async function measureSystem(entry: SystemEntry, dir: string, tag = ''): Promise<SystemResult> {
  const speed = await measureInChild(entry, 'speed', dir, tag);
  if (speed.unavailable) return speed;
  const memory = await measureInChild(entry, 'memory', dir, tag);
  if (memory.unavailable) return { ...speed, memory: { status: 'error', error: memory.unavailable } };
  const share = (pick: (i: Interference) => number) =>
    Math.max(...[speed, memory].map((r) => (r.interference ? pick(r.interference) : 0)));
  return {
    ...speed,
    memory: memory.memory,
    cpuTicks: (speed.cpuTicks ?? 0) + (memory.cpuTicks ?? 0),
    interference: { otherCpuShare: share((i) => i.otherCpuShare), stealShare: share((i) => i.stealShare) },
  };
}

function codecallFailed(systems: readonly SystemResult[]): string[] {
  return systems
    .filter((s) => s.id.startsWith('codecall'))
    .flatMap((s) => {
      if (s.unavailable) return [`${s.name}: ${s.unavailable}`];
      return Object.entries({
        coldStart: s.coldStart,
        toolLoop: s.toolLoop,
        throughput: s.throughput,
        memory: s.memory,
      })
        .filter(([, o]) => o.status === 'error')
        .map(([metric, o]) => `${s.name}: ${metric}: ${o.status === 'error' ? o.error : ''}`);
    });
}

async function main(): Promise<number> {
  const only = process.env.BENCH_SYSTEMS?.split(',').map((s) => s.trim());
  const entries = only ? SYSTEMS.filter((s) => only.includes(s.id)) : SYSTEMS;
  console.log(
    `codecall benchmarks${QUICK ? ' (BENCH_QUICK=1: smoke sizes, numbers are not meaningful)' : ''}`,
  );
  const busyBeforeShare = await busyShare(1000);
  if (busyBeforeShare !== null && busyBeforeShare > 0.1) {
    console.log(
      `warning: the machine was ${(busyBeforeShare * 100).toFixed(0)}% busy before the run; other work will skew these numbers`,
    );
  }
  const loadShare = loadFromEnv();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'codecall-bench-'));
  const systems: SystemResult[] = [];
  const loadedSystems: SystemResult[] = [];
  try {
    for (const entry of entries) {
      systems.push(await measureSystem(entry, dir));
      if (loadShare === null) continue;
      // Side by side: the same system, loaded, right after its quiet run.
      const load = await CpuLoad.start(loadShare);
      try {
        const mark = load.mark();
        const loaded = await measureSystem(entry, dir, '-loaded');
        loaded.load = { asked: loadShare, achieved: load.shareSince(mark) };
        console.log(
          `[${loaded.name}] under load: the burners took ${(loaded.load.achieved * 100).toFixed(1)}% of the machine`,
        );
        loadedSystems.push(loaded);
      } finally {
        await load.stop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const report: BenchReport = {
    date: new Date().toISOString(),
    quick: QUICK,
    revision: revision(),
    machine: {
      cpus: os.availableParallelism(),
      cpuModel: cpuModel(),
      node: process.version,
      platform: `${os.platform()} ${os.arch()}`,
      totalMemMiB: Math.round(os.totalmem() / 1024 / 1024),
      busyBeforeShare,
    },
    systems,
    targets: computeTargets(systems),
    ...(loadShare === null
      ? {}
      : { loaded: { share: loadShare, systems: loadedSystems, targets: computeTargets(loadedSystems) } }),
  };
  const resultsDir = path.join(here, 'results');
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(path.join(resultsDir, 'latest.md'), `${formatMarkdown(report)}\n`);

  const { machine } = report;
  const busy =
    machine.busyBeforeShare === null
      ? ''
      : `, ${(machine.busyBeforeShare * 100).toFixed(0)}% busy before the run`;
  console.log(
    `\ncodecall ${report.revision}; ${machine.cpus} x ${machine.cpuModel}, node ${machine.node}${busy}\n`,
  );
  console.log(formatText(report));
  console.log(`\nwrote ${path.relative(root, path.join(resultsDir, 'latest.json'))}`);

  const problems = codecallFailed([...systems, ...loadedSystems]);
  if (problems.length > 0) {
    console.error(`\ncodecall itself failed:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
