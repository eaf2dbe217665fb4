// Tracing's cost (issue 25, ADR 0053): tool calls/s and executions/s of the durable runner (SQLite on /dev/shm,
// quickjs) with tracing off (no provider: the API's no-op tracer), and with the SDK exporting over OTLP/HTTP to a
// receiver on loopback; beside them the same workload on another build (`--baseline=DIR`, a dist/ of a build
// without tracing, or with the tracer bypassed), so "off" is measured against code without the tracing calls.
// The store is on /dev/shm (BENCH_OTEL_DIR): on a disk, fsync moves the modes by 10-20% between runs and a 5%
// question cannot be settled. Each mode runs in a child process of its own (no provider or context manager left
// over from another mode), the modes alternate within each round, and each child measures BENCH_OTEL_REPS times
// (its median counts); `ab` alternates spans on and off inside one child with one provider, registered for the
// "on" halves only, and reports the main thread's CPU apart (the runner, the journal and tracing run there; the
// quickjs worker's spinning is in the process's figure). Printed: the medians, the min-max spread over rounds, and
// the median of the ratios of the same round (paired, so a drift in the machine's load falls on both sides alike).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { ProxyTracerProvider, trace } from '@opentelemetry/api';
import { median } from './stats.ts';
import type * as Internal from '../dist/internal.js';
import type * as Provider from '../dist/service/telemetry-provider.js';

const CALLS = Number(process.env.BENCH_OTEL_CALLS ?? 400);
const EXECUTIONS = Number(process.env.BENCH_OTEL_EXECUTIONS ?? 60);
const ROUNDS = Number(process.env.BENCH_OTEL_ROUNDS ?? 5);
const REPS = Number(process.env.BENCH_OTEL_REPS ?? 3);
// BENCH_OTEL_NO_SPIN=1: the driver's threads wait without spinning, so CPU time counts work, not waits (a spinning
// thread burns CPU for as long as the other side takes, which inflates any added latency).
const NO_SPIN = process.env.BENCH_OTEL_NO_SPIN === '1';
const PROTOCOL = process.env.BENCH_OTEL_PROTOCOL === 'http/json' ? 'http/json' : 'http/protobuf';
const DIR = process.env.BENCH_OTEL_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());

interface Sample {
  readonly callsPerSec: number;
  readonly execsPerSec: number;
  /** CPU time of the whole process (all threads) per tool call and per execution, microseconds. */
  readonly cpuPerCall: number;
  readonly cpuPerExec: number;
  /** CPU time of the main thread alone per tool call (Linux; the runner, the journal and tracing run there). */
  readonly mainPerCall: number;
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** The main thread's CPU time (us), from /proc/thread-self/schedstat; 0 where there is none. */
const mainCpuUs = (): number => {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]) / 1000;
  } catch {
    return 0;
  }
};

type Telemetry = { forceFlush(): Promise<void>; shutdown(): Promise<void> } | null;

async function child(mode: string, dist: string, url: string): Promise<void> {
  const internal = (await import(join(dist, 'internal.js'))) as typeof Internal;
  const { createQuickJsDriver, defineTool, TaskRunner, ToolRegistry, createSqliteTaskStore } = internal;
  const needsSdk = mode === 'ctx' || mode === 'on' || mode === 'ab';
  const sdk = needsSdk
    ? ((await import(join(dist, 'service/telemetry-provider.js'))) as typeof Provider)
    : null;
  const start = (): Telemetry =>
    sdk?.startTelemetry({
      url,
      protocol: PROTOCOL,
      serviceName: 'bench',
      // BENCH_OTEL_SAMPLER=always_off: the provider and the wrappers without recording or export.
      sampler: process.env.BENCH_OTEL_SAMPLER === 'always_off' ? 'always_off' : 'always_on',
      ratio: 1,
      includeContent: false,
      contentMaxBytes: 1024,
      headers: {},
    }) ?? null;
  // The context manager alone (what the JSON log registers too): its cost apart from the spans'. In `ab` it is
  // registered for both halves (a provider's shutdown leaves it), so `ab` compares spans on against spans off.
  if (mode === 'ctx' || mode === 'ab') sdk?.ensureContextManager();
  const dir = await mkdtemp(join(DIR, 'codecall-bench-otel-'));
  const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  const driver = createQuickJsDriver({
    workers: 1,
    warmVmsPerWorker: 1,
    ...(NO_SPIN ? { spinMicros: 0, mainSpinMicros: 0 } : {}),
  });
  const echo = defineTool({ name: 'echo', description: '', effect: 'read', execute: (a: unknown) => a });
  const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([echo]), owner: 'bench' });
  const run = async (code: string) => {
    const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const done = await runner.runTask(task.id);
    if (done?.status !== 'succeeded') throw new Error(`bench task ${done?.status}`);
  };
  const loop = `for (let i = 0; i < ${CALLS}; i++) await tools.echo({ i }); return 1;`;
  const one = 'return await tools.echo({ i: 1 });';
  type Reps = { calls: number[]; execs: number[]; callCpu: number[]; execCpu: number[]; callMain: number[] };
  const rep = async (telemetry: Telemetry, into: Reps) => {
    let t = performance.now();
    let c = cpuUs();
    const m = mainCpuUs();
    await run(loop);
    await telemetry?.forceFlush();
    into.calls.push(CALLS / ((performance.now() - t) / 1000));
    into.callCpu.push((cpuUs() - c) / CALLS);
    into.callMain.push((mainCpuUs() - m) / CALLS);
    t = performance.now();
    c = cpuUs();
    for (let i = 0; i < EXECUTIONS; i++) await run(one);
    await telemetry?.forceFlush();
    into.execs.push(EXECUTIONS / ((performance.now() - t) / 1000));
    into.execCpu.push((cpuUs() - c) / EXECUTIONS);
  };
  const reps = (): Reps => ({ calls: [], execs: [], callCpu: [], execCpu: [], callMain: [] });
  const sampleOf = (r: Reps): Sample => ({
    callsPerSec: median(r.calls),
    execsPerSec: median(r.execs),
    cpuPerCall: median(r.callCpu),
    cpuPerExec: median(r.execCpu),
    mainPerCall: median(r.callMain),
  });
  // Warm-up: JIT, the driver's VMs, SQLite's pages (and, in `ab`, the SDK's code paths).
  const warm = mode === 'on' || mode === 'ab' ? start() : null;
  await run(loop);
  for (let i = 0; i < 10; i++) await run(one);
  const out: Record<string, Sample> = {};
  if (mode === 'ab') {
    // Spans on and off alternate in one process: no difference of process, heap layout or JIT between them. One
    // provider serves every "on" half, as one serves a service for its life (its exporter's connection and its
    // code paths warm): it is registered for an "on" half and unregistered for an "off" one (the API's no-op
    // tracer then, as with no provider), not made anew each time.
    const proxy = trace.getTracerProvider();
    const provider = proxy instanceof ProxyTracerProvider ? proxy.getDelegate() : proxy;
    const on = reps();
    const off = reps();
    for (let block = 0; block < REPS; block++) {
      const order = block % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const m of order) {
        if (m === 'on') trace.setGlobalTracerProvider(provider);
        else trace.disable();
        await rep(m === 'on' ? warm : null, m === 'on' ? on : off);
      }
    }
    trace.setGlobalTracerProvider(provider);
    await warm?.shutdown();
    out['on-ab'] = sampleOf(on);
    out['ctx-ab'] = sampleOf(off);
  } else {
    const r = reps();
    for (let i = 0; i < REPS; i++) await rep(warm, r);
    await warm?.shutdown();
    out[mode] = sampleOf(r);
  }
  await store.close();
  await driver.close();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function runChild(
  mode: string,
  dist: string,
  url: string,
  profile?: string,
): Promise<Record<string, Sample>> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        ...(profile
          ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${mode}-${Date.now()}.cpuprofile`]
          : []),
        '--import',
        'tsx',
        new URL(import.meta.url).pathname,
        `--child=${mode}`,
        `--dist=${dist}`,
        `--url=${url}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`child ${mode} exited ${code}`));
      const last = out.trim().split('\n').at(-1) ?? '{}';
      resolve(JSON.parse(last) as Record<string, Sample>);
    });
  });
}

async function main(): Promise<void> {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const childMode = arg('child');
  if (childMode) return child(childMode, arg('dist') ?? '', arg('url') ?? '');
  const dist = new URL('../dist', import.meta.url).pathname;
  const baseline = arg('baseline');
  const profile = arg('profile');
  // The receiver: takes OTLP/HTTP; JSON payloads are parsed and their spans counted, protobuf ones only read.
  let spans = 0;
  let exports = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      exports++;
      if (req.headers['content-type'] !== 'application/json') {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[];
      };
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  // BENCH_OTEL_MODES picks among baseline (with --baseline), off, ctx (the context manager alone), on, and ab (spans
  // on and off alternating in one process, reported as on-ab and ctx-ab).
  const wanted = (process.env.BENCH_OTEL_MODES ?? 'baseline,off,on').split(',');
  const modes = (
    [
      ...(baseline ? ([['baseline', baseline]] as [string, string][]) : []),
      ['off', dist],
      ['ctx', dist],
      ['on', dist],
      ['ab', dist],
    ] as [string, string][]
  ).filter(([m]) => wanted.includes(m));
  const samples = new Map<string, Sample[]>();
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order, so a drift in the machine's load falls on every mode alike.
    const order = round % 2 === 0 ? modes : [...modes].reverse();
    for (const [mode, from] of order) {
      loads.push(loadavg()[0] ?? 0);
      const got = await runChild(mode, from, url, profile);
      for (const [m, sample] of Object.entries(got)) samples.set(m, [...(samples.get(m) ?? []), sample]);
    }
  }
  server.close();
  type Key = keyof Sample;
  const of = (mode: string, key: Key) => (samples.get(mode) ?? []).map((s) => s[key]);
  const fmt = (v: number, key: Key) => (key === 'execsPerSec' ? Math.round(v * 10) / 10 : Math.round(v));
  const spread = (mode: string, key: Key) =>
    `${fmt(Math.min(...of(mode, key)), key)}-${fmt(Math.max(...of(mode, key)), key)}`;
  console.table(
    [...samples.keys()].map((mode) => ({
      mode,
      'tool calls/s': fmt(median(of(mode, 'callsPerSec')), 'callsPerSec'),
      'calls/s spread': spread(mode, 'callsPerSec'),
      'executions/s': fmt(median(of(mode, 'execsPerSec')), 'execsPerSec'),
      'execs/s spread': spread(mode, 'execsPerSec'),
      'CPU us/call': fmt(median(of(mode, 'cpuPerCall')), 'cpuPerCall'),
      'CPU us/exec': fmt(median(of(mode, 'cpuPerExec')), 'cpuPerExec'),
      'main CPU us/call': fmt(median(of(mode, 'mainPerCall')), 'mainPerCall'),
    })),
  );
  // Ratios of the same round, then their median and spread.
  const ratio = (a: string, b: string, key: Key) => {
    const bs = of(b, key);
    const rs = of(a, key).map((v, i) => v / (bs[i] ?? Number.NaN));
    const r = (x: number) => x.toFixed(3);
    return `${r(median(rs))} (${r(Math.min(...rs))}-${r(Math.max(...rs))})`;
  };
  console.log(
    `${PROTOCOL}: ${exports} export requests, spans counted (JSON only): ${spans} (${ROUNDS} rounds x ${REPS} reps; ${CALLS} sequential calls, ${EXECUTIONS} one-call executions; store in ${DIR}${NO_SPIN ? '; no spinning' : ''})`,
  );
  console.log('paired ratios, median (min-max over rounds); CPU time is per call or execution, all threads:');
  const pairs: [string, string][] = [
    ['on', 'off'],
    ['ctx', 'off'],
    ['off', 'baseline'],
    ['on-ab', 'ctx-ab'],
  ];
  for (const [a, b] of pairs) {
    if (!samples.has(a) || !samples.has(b)) continue;
    console.log(
      `  ${a}/${b}: tool calls/s ${ratio(a, b, 'callsPerSec')}, executions/s ${ratio(a, b, 'execsPerSec')}; ` +
        `CPU per call ${ratio(a, b, 'cpuPerCall')} (main thread ${ratio(a, b, 'mainPerCall')}), per execution ${ratio(a, b, 'cpuPerExec')}`,
    );
  }
  console.log(
    `load average (1 min) during the run: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
  );
}

await main();
