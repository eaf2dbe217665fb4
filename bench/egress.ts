// Network egress (issue 21), in one run, as ratios: a GET round trip against a loopback server from the guest's
// fetch (through the host: the quickjs sandbox, the egress's checks, a new connection per request) against Node's
// own fetch (undici, keep-alive) and against node:http without keep-alive (what the egress does per hop); the same
// from a durable task (each request journaled, SQLite); the memory of a task whose server streams 50 MB
// (refused past max_bytes, never buffered whole); and (ADR 0046) the memory of a one-off run (its body in a temporary
// file) and of a durable task (stored out of line) that stream a 50 MB response and sum its bytes (BENCH_LARGE_MIB
// to change the size).
// Usage: npm run bench:egress (BENCH_QUICK=1 for fewer rounds).
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import {
  createEgress,
  createQuickJsDriver,
  createRuntime,
  createSqliteTaskStore,
  runProgram,
  ToolRegistry,
} from '../dist/internal.js';
import { busyShare } from './machine.ts';
import { MIB, median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = QUICK ? 100 : 400;
const ROUNDS = QUICK ? 3 : 5;

const body = JSON.stringify({
  ok: true,
  items: Array.from({ length: 20 }, (_, i) => ({ i, name: `item ${i}` })),
});
const server = createServer((req, res) => {
  if (req.url?.startsWith('/stream')) {
    const size = Number(new URL(req.url, 'http://x').searchParams.get('mib') ?? 50) * MIB;
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 1);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => (sent = Infinity));
    pump();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const url = `http://127.0.0.1:${port}/data`;
const access = { allow: [`127.0.0.1:${port}`], allowHttp: true, maxRequests: 1_000_000 };

async function nodeFetch(): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < N; i++) await (await fetch(url)).json();
  return (performance.now() - t) / N;
}

async function nodeHttpNoKeepAlive(): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < N; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(url, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          JSON.parse(Buffer.concat(chunks).toString());
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  }
  return (performance.now() - t) / N;
}

const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
await driver.ready();
const egress = createEgress({ allowPrivate: true });
const program = `for (let i = 0; i < ${N}; i++) await (await fetch('${url}')).json(); return 1;`;

async function guestFetch(): Promise<number> {
  const t = performance.now();
  const r = await runProgram({ driver, code: program, network: { egress, access, maxRequests: 1_000_000 } });
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  return (performance.now() - t) / N;
}

const dir = await mkdtemp(join(os.tmpdir(), 'bench-egress-'));
const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db'), auditKey: null });
const runtime = createRuntime({
  store,
  drivers: [driver],
  tools: new ToolRegistry([]),
  egress,
  egressMaxRequests: 1_000_000,
  pollMs: 5,
});
runtime.start();

async function durableFetch(): Promise<number> {
  const t = performance.now();
  // A loaded machine's commits can make 400 journaled requests outlast the default 30 s.
  const task = await runtime.submit({
    code: program,
    constraints: { networkAccess: access },
    limits: { timeoutMs: 600_000 },
  });
  const done = await runtime.wait(task.task_id, { until: 'terminal' });
  if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
  return (performance.now() - t) / N;
}

/** Runs `work`, sampling the process's RSS every 5 ms: its peak above the start (MiB) and the wall time. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ value: T; peakMib: number; ms: number }> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const t = performance.now();
  try {
    const value = await work();
    return { value, peakMib: (peak - before) / MIB, ms: performance.now() - t };
  } finally {
    clearInterval(timer);
  }
}

/** The guest's source that streams a response of `mib` MiB and sums every 4096th byte. */
const streamingProgram = (
  mib: number,
): string => `const r = await fetch('http://127.0.0.1:${port}/stream?mib=${mib}');
      let n = 0, sum = 0;
      for await (const c of r.body) { for (let i = 0; i < c.length; i += 4096) sum += c[i]; n += c.length; }
      return { n, sum };`;

async function streamedMemory(): Promise<{ peakMib: number; code: unknown; ms: number }> {
  const {
    value: r,
    peakMib,
    ms,
  } = await withPeakRss(() =>
    runProgram({
      driver,
      code: `try { await fetch('http://127.0.0.1:${port}/stream'); return 'read'; } catch (e) { return e.code; }`,
      network: { egress, access: { ...access, maxBytes: 10 * MIB } },
    }),
  );
  return { peakMib, code: r.status === 'succeeded' ? r.value : r.error.code, ms };
}

const LARGE_MIB = Number(process.env.BENCH_LARGE_MIB ?? 50);
const largeRuntime = createRuntime({
  store,
  drivers: [driver],
  tools: new ToolRegistry([]),
  egress: createEgress({ allowPrivate: true, limits: { maxBytes: 4 * LARGE_MIB * MIB } }),
  pollMs: 5,
});

/** A durable task streams the whole response (stored out of line) and sums its bytes: the host's peak RSS. */
async function streamedLarge(
  mib: number,
): Promise<{ peakMib: number; sum: unknown; ms: number; stored: number }> {
  const {
    value: done,
    peakMib,
    ms,
  } = await withPeakRss(async () => {
    const task = await largeRuntime.submit({
      code: streamingProgram(mib),
      constraints: { networkAccess: { ...access, maxBytes: 4 * LARGE_MIB * MIB } },
      // The guest's memory is part of the process's: a VM of 32 MiB streams any size.
      limits: { timeoutMs: 600_000, memoryBytes: 32 * MIB },
    });
    return largeRuntime.wait(task.task_id, { until: 'terminal' });
  });
  if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
  const journal = await store.readJournal(done.task_id);
  return {
    peakMib,
    sum: (done.result as { output?: unknown } | null)?.output,
    ms,
    stored: journal.reduce((n, e) => n + JSON.stringify(e.data).length, 0),
  };
}

/** The same from a one-off run (runProgram, as `codecall run`): the body streamed to a temporary file. */
async function streamedLargeOneOff(mib: number): Promise<{ peakMib: number; sum: unknown; ms: number }> {
  const {
    value: r,
    peakMib,
    ms,
  } = await withPeakRss(() =>
    runProgram({
      driver,
      code: streamingProgram(mib),
      network: {
        egress: createEgress({ allowPrivate: true, limits: { maxBytes: 4 * LARGE_MIB * MIB } }),
        access: { ...access, maxBytes: 4 * LARGE_MIB * MIB },
      },
      limits: { timeoutMs: 600_000, memoryBytes: 32 * MIB },
    }),
  );
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  return { peakMib, sum: r.value, ms };
}

console.log(`machine: ${os.cpus().length} cores, busy ${String(await busyShare(1000))} before the run`);
await nodeFetch();
await guestFetch();
const samples: Record<string, number[]> = { node: [], plain: [], guest: [], durable: [] };
for (let r = 0; r < ROUNDS; r++) {
  samples.node?.push(await nodeFetch());
  samples.guest?.push(await guestFetch());
  samples.plain?.push(await nodeHttpNoKeepAlive());
  samples.durable?.push(await durableFetch());
}
const ms = (k: string): number => median(samples[k] ?? []);
const row = (name: string, k: string): void =>
  console.log(
    `${name.padEnd(52)} ${ms(k).toFixed(3).padStart(8)} ms  ${(ms(k) / ms('node')).toFixed(2)}x Node fetch`,
  );
console.log(`GET round trip, ${N} sequential requests, median of ${ROUNDS} rounds:`);
row("Node's fetch (undici, keep-alive)", 'node');
row('node:http, a new connection per request', 'plain');
row('guest fetch, runProgram (quickjs -> host -> egress)', 'guest');
row('guest fetch, durable task (each request journaled)', 'durable');
// On a shared machine the load moves between rounds: the ratio within each round (Node's fetch and the guest's a
// second apart) is steadier than the ratio of the medians.
const ratios = (samples.guest ?? []).map((g, i) => g / (samples.node?.[i] ?? NaN)).sort((a, b) => a - b);
console.log(
  `guest fetch / Node fetch within each round: median ${median(ratios).toFixed(2)}x, range ${ratios[0]?.toFixed(2)}-${ratios.at(-1)?.toFixed(2)}x`,
);
const memory = await streamedMemory();
console.log(
  `a 50 MB response, max_bytes 10 MiB: ${String(memory.code)} after ${memory.ms.toFixed(0)} ms, peak RSS +${memory.peakMib.toFixed(1)} MiB`,
);
for (const mib of [LARGE_MIB, 2 * LARGE_MIB]) {
  const large = await streamedLargeOneOff(mib);
  console.log(
    `a one-off run (runProgram) streaming a ${mib} MiB response to a temporary file (VM 32 MiB): ${JSON.stringify(large.sum)} in ${(large.ms / 1000).toFixed(1)} s, peak RSS +${large.peakMib.toFixed(1)} MiB`,
  );
}
// Started only now: a runtime's polling beside the round trips above would be measured with them.
largeRuntime.start();
// Twice the size must not need more memory: bounded, not proportional.
for (const mib of [LARGE_MIB, 2 * LARGE_MIB]) {
  const large = await streamedLarge(mib);
  console.log(
    `a durable task streaming a ${mib} MiB response stored out of line (VM 32 MiB): ${JSON.stringify(large.sum)} in ${(large.ms / 1000).toFixed(1)} s, peak RSS +${large.peakMib.toFixed(1)} MiB, journal ${large.stored} bytes`,
  );
}
await largeRuntime.close();
await runtime.close();
await store.close();
await driver.close();
server.close();
await rm(dir, { recursive: true, force: true });
