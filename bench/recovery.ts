// Start and recovery of `codecall serve` (issue 16), as real processes of the built CLI (dist/):
// - start to listening (a TCP connect succeeds), to the API (/healthz says ok), to ready (/readyz 200: the sandboxes
//   are up and tasks are claimed), beside a bare node:http server started the same way (the floor);
// - kill to first recovered task: SIGKILL a server holding running tasks, then either start it again or leave a
//   live sibling on the database, and time until one of its tasks is claimed again (attempts 2 in the database),
//   beside the lease the tasks would otherwise have waited for.
// Usage: npm run bench:recovery (BENCH_QUICK=1 for fewer rounds; BENCH_BASELINE_ROOT=<an older checkout, built>
// measures that one's start as well).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { busyShare } from './machine.ts';
import { median, percentile } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 3 : 7;
const LEASE_MS = 15_000;
const root = new URL('..', import.meta.url).pathname;
const baselineRoot = process.env.BENCH_BASELINE_ROOT;

await mkdir(join(root, 'test-results'), { recursive: true });
// Inside the repo, so the tools module's `import ... from 'codecall'` resolves to the built package.
const dir = await mkdtemp(join(root, 'test-results', 'bench-recovery-'));
const tools = join(dir, 'tools.js');
await writeFile(
  tools,
  `import { defineTool } from 'codecall';
export default [defineTool({ name: 'nap', description: 'sleeps', effect: 'read',
  execute: (a, ctx) => new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve(a.ms), a.ms);
    ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
  }) })];
`,
);

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  s.close();
  await once(s, 'close');
  return port;
}

const canConnect = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const res = await fetch(url);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

/** Polls `check` every 2 ms; the ms from `t0` at which it first held. */
async function whenTrue(
  t0: number,
  check: () => Promise<boolean> | boolean,
  limitMs = 60_000,
): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error('timed out');
    await sleep(2);
  }
}

function serve(
  checkout: string,
  options: { port: number; db: string; python: boolean; tools?: boolean; concurrency?: number },
): ChildProcess {
  const args = [
    join(checkout, 'bin/codecall.js'),
    'serve',
    '--port',
    String(options.port),
    '--db',
    options.db,
  ];
  if (options.tools) args.push('--tools', tools);
  args.push('--concurrency', String(options.concurrency ?? 4), '--insecure-no-auth');
  return spawn(process.execPath, args, {
    cwd: checkout,
    env: { ...process.env, CODECALL_PYTHON: String(options.python), CODECALL_LEASE_MS: String(LEASE_MS) },
    stdio: 'ignore',
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

interface StartTimes {
  listening: number;
  api: number;
  ready: number;
}

async function startOnce(checkout: string, python: boolean, db: string): Promise<StartTimes> {
  const port = await freePort();
  const t0 = performance.now();
  const child = serve(checkout, { port, db, python });
  try {
    const base = `http://127.0.0.1:${port}`;
    const listening = await whenTrue(t0, () => canConnect(port));
    const api = await whenTrue(t0, async () => (await getJson(`${base}/healthz`))?.body.status === 'ok');
    const ready = await whenTrue(t0, async () => (await getJson(`${base}/readyz`))?.status === 200);
    return { listening, api, ready };
  } finally {
    await stop(child);
  }
}

/** A bare node:http server, spawned and probed the same way: what no service can beat. */
async function floorOnce(): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['-e', `require('node:http').createServer((q, s) => s.end()).listen(${port}, '127.0.0.1')`],
    { stdio: 'ignore' },
  );
  try {
    return await whenTrue(t0, () => canConnect(port));
  } finally {
    await stop(child);
  }
}

/** SIGKILL a server with running tasks; ms until the first is claimed again by its restart or a live sibling. */
async function recoveryOnce(by: 'restart' | 'sibling'): Promise<number> {
  const db = join(dir, `recovery-${by}-${Math.random().toString(36).slice(2)}.db`);
  const port = await freePort();
  const first = serve(root, { port, db, python: false, tools: true });
  const base = `http://127.0.0.1:${port}`;
  let sibling: ChildProcess | undefined;
  let restarted: ChildProcess | undefined;
  const sql = (): Database.Database => new Database(db, { readonly: true, fileMustExist: true });
  try {
    const t0 = performance.now();
    await whenTrue(t0, async () => (await getJson(`${base}/readyz`))?.status === 200);
    if (by === 'sibling') {
      const siblingPort = await freePort();
      sibling = serve(root, { port: siblingPort, db, python: false, tools: true });
      const t1 = performance.now();
      await whenTrue(
        t1,
        async () => (await getJson(`http://127.0.0.1:${siblingPort}/readyz`))?.status === 200,
      );
    }
    for (let i = 0; i < 4; i++) {
      await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: `return await tools.nap({ ms: ${30_000 + i} });` }),
      });
    }
    const reader = sql();
    try {
      const running = reader.prepare("SELECT count(*) AS n FROM tasks WHERE status = 'running'");
      const recovered = reader.prepare('SELECT count(*) AS n FROM tasks WHERE attempts >= 2');
      await whenTrue(performance.now(), () => (running.get() as { n: number }).n === 4);
      const killedAt = performance.now();
      first.kill('SIGKILL');
      await once(first, 'exit');
      if (by === 'restart') restarted = serve(root, { port, db, python: false, tools: true });
      return await whenTrue(killedAt, () => (recovered.get() as { n: number }).n > 0, LEASE_MS * 3);
    } finally {
      reader.close();
    }
  } finally {
    await stop(first, 'SIGKILL');
    if (sibling) await stop(sibling);
    if (restarted) await stop(restarted);
  }
}

const fmt = (ms: number): string => `${Math.round(ms).toLocaleString('en-US')} ms`;
const summary = (xs: readonly number[]): string => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `p50 ${fmt(median(sorted))}, p90 ${fmt(percentile(sorted, 90))} (${xs.length} runs)`;
};

console.log(
  `codecall serve start and recovery, ${os.cpus().length} CPUs, Node ${process.version}, ${ROUNDS} rounds` +
    `; machine busy before: ${(((await busyShare(1000)) ?? 0) * 100).toFixed(0)}%`,
);

const floor: number[] = [];
for (let i = 0; i < ROUNDS; i++) floor.push(await floorOnce());
const floorP50 = median([...floor]);
console.log(`bare node:http server, start to listening: ${summary(floor)}`);

// Each checkout on its own files: an older one refuses a database migrated past its schema.
const checkouts = [
  { name: 'this checkout', checkout: root, tag: 'new' },
  ...(baselineRoot ? [{ name: `baseline ${baselineRoot}`, checkout: baselineRoot, tag: 'baseline' }] : []),
];
const medians = new Map<string, StartTimes>();
for (const { name, checkout, tag } of checkouts) {
  for (const python of [false, true]) {
    const runs: StartTimes[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      runs.push(await startOnce(checkout, python, join(dir, `start-${tag}-${python}-${i}.db`)));
    }
    const listening = runs.map((r) => r.listening);
    medians.set(`${tag} ${python}`, {
      listening: median(listening),
      api: median(runs.map((r) => r.api)),
      ready: median(runs.map((r) => r.ready)),
    });
    console.log(`${name}, python ${python ? 'on' : 'off'}:`);
    const floorRatio = (median(listening) / floorP50).toFixed(2);
    console.log(`  start to listening ${summary(listening)}: ${floorRatio}x bare node`);
    console.log(`  start to API       ${summary(runs.map((r) => r.api))}`);
    console.log(`  start to ready     ${summary(runs.map((r) => r.ready))}`);
  }
}
for (const python of [false, true]) {
  const now = medians.get(`new ${python}`);
  const then = medians.get(`baseline ${python}`);
  if (!now || !then) continue;
  const ratio = (k: keyof StartTimes): string => (now[k] / then[k]).toFixed(2);
  console.log(
    `python ${python ? 'on' : 'off'}, this checkout / baseline (p50): listening ${ratio('listening')}x, ` +
      `API ${ratio('api')}x, ready ${ratio('ready')}x`,
  );
}

for (const by of ['restart', 'sibling'] as const) {
  const runs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await recoveryOnce(by));
  console.log(
    `kill to first recovered task (${by === 'restart' ? 'the server started again' : 'a live sibling'}): ${summary(runs)}: ` +
      `${(median([...runs]) / LEASE_MS).toFixed(3)}x the ${fmt(LEASE_MS)} lease it no longer waits for`,
  );
}

await rm(dir, { recursive: true, force: true });
