// Where tracing's per-call cost goes (issue 25, ADR 0053): the `ab` workload of bench/otel.ts (400 sequential echo
// calls in one task, SQLite on /dev/shm, quickjs) with variants of tracing alternating in one process, and for each:
// wall time, process CPU and CPU by thread per call (Linux schedstat: a thread's own run time, which a loaded
// machine disturbs less than wall time), GC time per call, the async resources made per call by type (promises,
// ticks, immediates, timers: an async hook, in separate untimed rounds, as the hook itself slows every promise), and
// with BENCH_OTEL_PROFILE=1 the main thread's CPU profile (inspector) per variant as self time per call by function
// and by file. V8's profiler samples wall time: on a loaded machine a descheduled thread's time lands on whatever it
// was running, so trust the profile on a quiet machine only. Diagnostic, not a benchmark of record (bench/otel.ts).
//
// Variants (BENCH_OTEL_VARIANTS, default off,on): off (no provider), on (the service's SDK: BatchSpanProcessor,
// OTLP/HTTP protobuf to a receiver on loopback), unsampled (the same with the always_off sampler), noexport (a
// provider whose processor drops every span: recorded, never exported).
import { createHook } from 'node:async_hooks';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { addProfile, patchCrossing, threadCpuUs } from './otel-profile-probes.ts';
import type { Profile } from './otel-profile-probes.ts';
import { median } from './stats.ts';
import type * as Internal from '../dist/internal.js';
import type * as Provider from '../dist/service/telemetry-provider.js';

const CALLS = Number(process.env.BENCH_OTEL_CALLS ?? 400);
const BLOCKS = Number(process.env.BENCH_OTEL_BLOCKS ?? 6);
const PROFILE = process.env.BENCH_OTEL_PROFILE === '1';
const VARIANTS = (process.env.BENCH_OTEL_VARIANTS ?? 'off,on').split(',');
const DIR = process.env.BENCH_OTEL_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
const dist = new URL('../dist', import.meta.url).pathname;

// BENCH_OTEL_DIST2=DIR: a second build (another dist/) in the same process; a variant ending in @2 runs on it
// (on,on@2: this build's tracing against the other's, round by round). The API's globals are shared by both.
const DIST2 = process.env.BENCH_OTEL_DIST2;
const sdk = (await import(join(dist, 'service/telemetry-provider.js'))) as typeof Provider;
type Proto = { prototype: Record<string, ((...a: unknown[]) => unknown) | undefined> };

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
type Telemetry = { forceFlush(): Promise<void>; shutdown(): Promise<void> } | null;
// Ablations: on+nolive (the live host not wrapped: no context.with, no ctx.traceContext), on+nohost (no call spans:
// the run's and the execution's only), patched on the CallTracer's prototype for that half.
const passThrough = (inner: unknown) => inner;
type Host = { call(c: unknown, s: unknown): Promise<unknown> };
const bare = (inner: unknown, c: unknown, s: unknown) => (inner as Host).call(c, s);
const bareThen = (inner: unknown, c: unknown, s: unknown) => {
  const served = (inner as Host).call(c, s);
  served.then(
    () => undefined,
    () => undefined,
  );
  return served;
};
// A variant named twice (off,off#2) shows the noise between two identical halves.
const start = (name: string): Telemetry => {
  const [variant = 'off', ...mods] = name.split(/[#@]/)[0]?.split('+') ?? [];
  for (const b of builds.values()) {
    b.tracer.prototype.live = mods.includes('nolive') ? passThrough : b.tracerMethods.live;
    b.tracer.prototype.host = mods.includes('nohost') ? passThrough : b.tracerMethods.host;
    // on+bare: the host wrapped, each call passed on as it is; on+then: the same with a reaction on its outcome.
    b.tracer.prototype.call = mods.includes('bare')
      ? bare
      : mods.includes('then')
        ? bareThen
        : b.tracerMethods.call;
    // on+nospan: the calls' spans never made (unless a tool asks for its trace context): what the rest costs.
    b.tracer.prototype.finish = mods.includes('nospan')
      ? () => trace.wrapSpanContext(INVALID_SPAN_CONTEXT)
      : b.tracerMethods.finish;
  }
  if (variant === 'off') return null;
  if (variant === 'noexport') {
    const drop = {
      onStart: () => undefined,
      onEnd: () => undefined,
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    const provider = new BasicTracerProvider({ spanProcessors: [drop] });
    trace.setGlobalTracerProvider(provider);
    return {
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(trace.disable()),
    };
  }
  return sdk.startTelemetry({
    url,
    protocol: 'http/protobuf',
    serviceName: 'bench',
    sampler: variant === 'unsampled' ? 'always_off' : 'always_on',
    ratio: 1,
    includeContent: false,
    contentMaxBytes: 1024,
    headers: {},
  });
};
sdk.ensureContextManager();

const timing = {
  answer: [] as number[],
  toTool: [] as number[],
  fromTool: [] as number[],
  turn: [] as number[],
  polls: 0,
  caught: 0,
  toolAt: -1,
};
const dir = await mkdtemp(join(DIR, 'codecall-otel-profile-'));
const loop = `for (let i = 0; i < ${CALLS}; i++) await tools.echo({ i }); return 1;`;
// BENCH_OTEL_WORKLOAD=execs: CALLS one-call executions (a task each) instead of one task making CALLS calls; the
// figures are then per execution.
const EXECS = process.env.BENCH_OTEL_WORKLOAD === 'execs';

interface Build {
  run(): Promise<void>;
  close(): Promise<void>;
  readonly tracer: Proto;
  readonly tracerMethods: Record<string, ((...a: unknown[]) => unknown) | undefined>;
}

async function load(from: string, key: string): Promise<Build> {
  const internal = (await import(join(from, 'internal.js'))) as typeof Internal;
  const { createQuickJsDriver, defineTool, TaskRunner, ToolRegistry, createSqliteTaskStore } = internal;
  const store = await createSqliteTaskStore({ path: join(dir, `tasks-${key}.db`) });
  // BENCH_OTEL_NO_SPIN=1: the threads sleep instead of spinning for each other, so CPU time counts work, not waits.
  const driver = createQuickJsDriver({
    workers: 1,
    warmVmsPerWorker: 1,
    ...(process.env.BENCH_OTEL_NO_SPIN === '1' ? { spinMicros: 0, mainSpinMicros: 0 } : {}),
  });
  const echo = defineTool({
    name: 'echo',
    description: '',
    effect: 'read',
    execute: (a: unknown) => {
      timing.toolAt = performance.now();
      return a;
    },
  });
  const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([echo]), owner: 'bench' });
  const runOne = async (code: string) => {
    const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const done = await runner.runTask(task.id);
    if (done?.status !== 'succeeded') throw new Error(`bench task ${done?.status}`);
  };
  await patchCrossing(from, timing);
  // Ablations: on+nolive (the live host not wrapped: no context.with, no ctx.traceContext), on+nohost (no call
  // spans: the run's and the execution's only), patched on the CallTracer's prototype for that half.
  const { CallTracer } = (await import(join(from, 'telemetry/call-tracer.js'))) as { CallTracer: Proto };
  return {
    run: async () => {
      if (!EXECS) return runOne(loop);
      for (let i = 0; i < CALLS; i++) await runOne('return await tools.echo({ i: 1 });');
    },
    close: async () => {
      await store.close();
      await driver.close();
    },
    tracer: CallTracer,
    tracerMethods: {
      live: CallTracer.prototype.live,
      host: CallTracer.prototype.host,
      call: CallTracer.prototype.call,
      finish: CallTracer.prototype.finish,
    },
  };
}
const builds = new Map<string, Build>([['1', await load(dist, '1')]]);
if (DIST2) builds.set('2', await load(DIST2, '2'));
const buildOf = (variant: string): Build => {
  const b = builds.get(variant.split('@')[1] ?? '1');
  if (!b) throw new Error(`no build for ${variant} (BENCH_OTEL_DIST2?)`);
  return b;
};
const share = (xs: number[], over: number) => xs.filter((x) => x > over).length / Math.max(1, xs.length);

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

const session = new Session();
session.connect();
if (PROFILE) {
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}
interface Figures {
  wall: number[];
  cpu: number[];
  gc: number[];
  threads: Map<string, number>[];
  self: Map<string, number>;
  answer: number[];
  toTool: number[];
  fromTool: number[];
  turn: number[];
  slowAnswers: number[];
  slowTurns: number[];
  caught: number[];
}
const fresh = (): Figures => ({
  wall: [],
  cpu: [],
  gc: [],
  threads: [],
  self: new Map(),
  answer: [],
  toTool: [],
  fromTool: [],
  turn: [],
  slowAnswers: [],
  slowTurns: [],
  caught: [],
});
const figures = new Map<string, Figures>(VARIANTS.map((v) => [v, fresh()]));
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const phase = async (variant: string) => {
  const f = figures.get(variant);
  if (!f) throw new Error(`unknown variant ${variant}`);
  const telemetry = start(variant);
  if (PROFILE) await session.post('Profiler.start');
  const g0 = gcMs;
  const c0 = cpu();
  const th0 = threadCpuUs();
  Object.assign(timing, { answer: [], toTool: [], fromTool: [], turn: [], polls: 0, caught: 0, toolAt: -1 });
  const t0 = performance.now();
  await buildOf(variant).run();
  await telemetry?.forceFlush();
  const th = threadCpuUs();
  f.threads.push(new Map([...th].map(([k, v]) => [k, (v - (th0.get(k) ?? 0)) / CALLS])));
  f.wall.push(((performance.now() - t0) * 1000) / CALLS);
  f.cpu.push((cpu() - c0) / CALLS);
  f.answer.push(median(timing.answer));
  f.toTool.push(median(timing.toTool));
  f.fromTool.push(median(timing.fromTool));
  f.turn.push(median(timing.turn));
  f.slowAnswers.push(share(timing.answer, 250));
  f.slowTurns.push(share(timing.turn, 50));
  f.caught.push(timing.caught / CALLS);
  // GC entries arrive asynchronously: let them in before reading.
  await new Promise((r) => setTimeout(r, 5));
  f.gc.push(((gcMs - g0) * 1000) / CALLS);
  if (PROFILE) addProfile(f.self, (await session.post('Profiler.stop')).profile as Profile);
  await telemetry?.shutdown();
};

// Async resources per call by type, in rounds of their own (the hook slows every promise).
const counts = async (variant: string) => {
  const telemetry = start(variant);
  const byType = new Map<string, number>();
  const hook = createHook({ init: (_id, type) => byType.set(type, (byType.get(type) ?? 0) + 1) }).enable();
  await buildOf(variant).run();
  hook.disable();
  await telemetry?.shutdown();
  return Object.fromEntries([...byType].map(([t, n]) => [t, Math.round((n / CALLS) * 10) / 10]));
};

const r1 = (v: number) => Math.round(v * 10) / 10;
// Warm-up of every variant, twice.
for (const v of [...VARIANTS, ...VARIANTS]) await phase(v);
for (const v of VARIANTS) figures.set(v, fresh());
const loads: number[] = [];
for (let b = 0; b < BLOCKS; b++) {
  loads.push(loadavg()[0] ?? 0);
  for (const v of b % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) await phase(v);
}
const threadNames = new Set([...figures.values()].flatMap((f) => f.threads.flatMap((t) => [...t.keys()])));
console.log(
  EXECS
    ? `per execution, medians over ${BLOCKS} rounds of ${CALLS} one-call executions:`
    : `per call, medians over ${BLOCKS} rounds of ${CALLS} calls:`,
);
console.table(
  Object.fromEntries(
    [...figures].map(([v, f]) => [
      v,
      {
        'wall us': Math.round(median(f.wall)),
        'CPU us': Math.round(median(f.cpu)),
        'GC us': r1(median(f.gc)),
        'answer us': Math.round(median(f.answer)),
        '(to tool': Math.round(median(f.toTool)),
        'from tool)': Math.round(median(f.fromTool)),
        'answers >250us': `${Math.round(median(f.slowAnswers) * 100)}%`,
        'guest turn us': Math.round(median(f.turn)),
        'turns >50us': `${Math.round(median(f.slowTurns) * 100)}%`,
        'caught by poll': `${Math.round(median(f.caught) * 100)}%`,
        ...Object.fromEntries(
          [...threadNames].map((n) => [
            `${n} CPU us`,
            Math.round(median(f.threads.map((t) => t.get(n) ?? 0))),
          ]),
        ),
      },
    ]),
  ),
);
// Paired ratios: each variant against the first, round by round (a drift in the machine's load falls on both).
const first = figures.get(VARIANTS[0] ?? 'off');
const paired = (xs: number[], ys: number[]) => median(xs.map((x, i) => x / (ys[i] ?? Number.NaN)));
const threadOf = (f: Figures, n: string) => f.threads.map((t) => t.get(n) ?? 0);
if (first) {
  console.log('paired ratios, median over rounds:');
  console.table(
    Object.fromEntries(
      [...figures].slice(1).map(([v, f]) => {
        // A variant on the second build against that build's off (off@2) when there is one.
        const base = (v.endsWith('@2') && figures.get('off@2')) || first;
        return [
          `${v} / ${base === first ? VARIANTS[0] : 'off@2'}`,
          {
            wall: paired(f.wall, base.wall).toFixed(3),
            CPU: paired(f.cpu, base.cpu).toFixed(3),
            'main CPU': paired(threadOf(f, 'main'), threadOf(base, 'main')).toFixed(3),
            answer: paired(f.answer, base.answer).toFixed(3),
          },
        ];
      }),
    ),
  );
}
console.log('async resources made per call:');
const made: Record<string, Record<string, number>> = {};
for (const v of VARIANTS) made[v] = await counts(v);
console.table(made);
if (PROFILE) {
  const n = BLOCKS * CALLS;
  const [a, b] = [VARIANTS[0] ?? 'off', VARIANTS.at(-1) ?? 'on'];
  const selfA = figures.get(a)?.self ?? new Map<string, number>();
  const selfB = figures.get(b)?.self ?? new Map<string, number>();
  const table = (keyOf: (fn: string) => string, rows: number) => {
    const sums = new Map<string, [number, number]>();
    for (const k of new Set([...selfA.keys(), ...selfB.keys()])) {
      const [x, y] = sums.get(keyOf(k)) ?? [0, 0];
      sums.set(keyOf(k), [x + (selfA.get(k) ?? 0) / n, y + (selfB.get(k) ?? 0) / n]);
    }
    console.table(
      [...sums]
        .sort(([, [x1, y1]], [, [x2, y2]]) => Math.abs(y2 - x2) - Math.abs(y1 - x1))
        .slice(0, rows)
        .map(([k, [x, y]]) => ({ where: k.slice(0, 110), [`${a} us`]: r1(x), [`${b} us`]: r1(y) })),
    );
  };
  console.log(`main thread self time per call, by function, largest differences (${b} - ${a}):`);
  table((k) => k, 40);
  console.log('by file:');
  table(
    (k) =>
      (k.split(' ')[1] ?? '').replace(/:\d+$/, '').replace(/^(node_modules\/@opentelemetry\/[^/]+).*$/, '$1'),
    25,
  );
}
console.log(`load average (1 min): ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
session.disconnect();
receiver.close();
for (const b of builds.values()) await b.close();
await rm(dir, { recursive: true, force: true });
