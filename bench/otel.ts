// Tracing's cost (issue 25, ADR 0053): tool calls/s and executions/s of the durable runner (SQLite file, quickjs)
// with tracing off (no provider: the API's no-op tracer), and with the SDK exporting over OTLP/HTTP to a receiver on
// loopback; beside them the same workload on the build before tracing existed (`--baseline DIR`, a dist/ of the
// commit before, default: none), so "off" is measured against code without any tracing call at all.
// Each mode runs in a child process of its own (no provider or context manager left over from another mode),
// alternating, several rounds; medians and ratios are printed.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { median } from './stats.ts';
import type * as Internal from '../dist/internal.js';
import type * as Provider from '../dist/service/telemetry-provider.js';

const CALLS = Number(process.env.BENCH_OTEL_CALLS ?? 400);
const EXECUTIONS = Number(process.env.BENCH_OTEL_EXECUTIONS ?? 60);
const ROUNDS = Number(process.env.BENCH_OTEL_ROUNDS ?? 3);

interface Sample {
  readonly callsPerSec: number;
  readonly execsPerSec: number;
  readonly spans: number;
}

async function child(mode: string, dist: string, url: string): Promise<void> {
  const internal = (await import(join(dist, 'internal.js'))) as typeof Internal;
  const { createQuickJsDriver, defineTool, TaskRunner, ToolRegistry, createSqliteTaskStore } = internal;
  let telemetry: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | null = null;
  if (mode === 'on') {
    const { startTelemetry } = (await import(join(dist, 'service/telemetry-provider.js'))) as typeof Provider;
    telemetry = startTelemetry({
      url,
      serviceName: 'bench',
      sampler: 'always_on',
      ratio: 1,
      includeContent: false,
      contentMaxBytes: 1024,
      headers: {},
    });
  }
  const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-otel-'));
  const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  const echo = defineTool({ name: 'echo', description: '', effect: 'read', execute: (a: unknown) => a });
  const runner = new TaskRunner({ store, driver, tools: new ToolRegistry([echo]), owner: 'bench' });
  const run = async (code: string) => {
    const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
    const done = await runner.runTask(task.id);
    if (done?.status !== 'succeeded') throw new Error(`bench task ${done?.status}`);
  };
  const loop = `for (let i = 0; i < ${CALLS}; i++) await tools.echo({ i }); return 1;`;
  const one = 'return await tools.echo({ i: 1 });';
  // Warm-up: JIT, the driver's VMs, SQLite's pages.
  await run(loop);
  for (let i = 0; i < 10; i++) await run(one);
  let t = performance.now();
  await run(loop);
  await telemetry?.forceFlush();
  const callsPerSec = CALLS / ((performance.now() - t) / 1000);
  t = performance.now();
  for (let i = 0; i < EXECUTIONS; i++) await run(one);
  await telemetry?.forceFlush();
  const execsPerSec = EXECUTIONS / ((performance.now() - t) / 1000);
  await telemetry?.shutdown();
  await store.close();
  await driver.close();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ callsPerSec, execsPerSec })}\n`);
}

function runChild(mode: string, dist: string, url: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
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
      resolve({ ...(JSON.parse(last) as Omit<Sample, 'spans'>), spans: 0 });
    });
  });
}

async function main(): Promise<void> {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const childMode = arg('child');
  if (childMode) return child(childMode, arg('dist') ?? '', arg('url') ?? '');
  const dist = new URL('../dist', import.meta.url).pathname;
  const baseline = arg('baseline');
  // The receiver: takes OTLP/HTTP JSON, counts spans (parses every payload, as a collector would).
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
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
  const modes: [string, string][] = [
    ...(baseline ? ([['baseline', baseline]] as [string, string][]) : []),
    ['off', dist],
    ['on', dist],
  ];
  const samples = new Map<string, Sample[]>(modes.map(([m]) => [m, []]));
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order, so a drift in the machine's load falls on every mode alike.
    const order = round % 2 === 0 ? modes : [...modes].reverse();
    for (const [mode, from] of order) {
      loads.push(loadavg()[0] ?? 0);
      samples.get(mode)?.push(await runChild(mode, from, url));
    }
  }
  server.close();
  const med = (mode: string, key: 'callsPerSec' | 'execsPerSec') =>
    median((samples.get(mode) ?? []).map((s) => s[key]));
  const rows = modes.map(([mode]) => ({
    mode,
    'tool calls/s': Math.round(med(mode, 'callsPerSec')),
    'executions/s': Math.round(med(mode, 'execsPerSec') * 10) / 10,
  }));
  console.table(rows);
  const ratio = (a: string, b: string, key: 'callsPerSec' | 'execsPerSec') =>
    (med(a, key) / med(b, key)).toFixed(3);
  console.log(
    `spans received: ${spans} (${ROUNDS} rounds; ${CALLS} sequential calls, ${EXECUTIONS} one-call executions)`,
  );
  console.log(
    `on/off: tool calls/s ${ratio('on', 'off', 'callsPerSec')}, executions/s ${ratio('on', 'off', 'execsPerSec')}`,
  );
  if (baseline) {
    console.log(
      `off/baseline: tool calls/s ${ratio('off', 'baseline', 'callsPerSec')}, executions/s ${ratio('off', 'baseline', 'execsPerSec')}`,
    );
  }
  console.log(
    `load average (1 min) during the run: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
  );
}

await main();
