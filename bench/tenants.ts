// Two tenants on one server (issue 17): tenant A runs a steady trivial load and records its latency while tenant
// B, in turn, opens stalled streams, sends huge tool arguments, lists 100 programs of 1 MiB, leaves 40 big payment
// requests pending while reading its inbox, floods the queue at top priority, opens hundreds of task-events
// streams and sends slow bodies. Prints A's p50/p99 per phase against A alone, and the server's
// peak RSS per phase against its baseline. The server is a real `codecall serve` child process (dist/).
// Usage: npm run bench:tenants (BENCH_QUICK=1 for short phases).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from './stats.ts';

// Each tenant connects from an address of its own (127.0.0.0/8 is all loopback), as two clients would: the
// server's per-address connection cap then bounds B without counting A.
const FROM = new Map<string, string>();
const agents = new Map<string, http.Agent>();
const QUICK = process.env.BENCH_QUICK === '1';
const PHASE_MS = QUICK ? 4_000 : 12_000;
const ROUND_CAP_MS = 10_000;

const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-tenants-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
// BENCH_CPU_PROF=DIR writes the server's CPU profile there (on exit); BENCH_PHASES=a,b runs only those phases;
// BENCH_DETAIL=1 prints A's submit, wait and list times apart; BENCH_SERVE_ARGS='--flag v' adds flags to serve.
const cpuProf = process.env.BENCH_CPU_PROF;
const DETAIL = process.env.BENCH_DETAIL === '1';
const serveArgs = process.env.BENCH_SERVE_ARGS?.split(' ').filter(Boolean) ?? [];
const onlyPhases = process.env.BENCH_PHASES?.split(',').map((p) => p.trim());
const server = spawn(
  process.execPath,
  [
    ...(cpuProf === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', cpuProf]),
    'bin/codecall.js',
    'serve',
    '--db',
    join(dir, 'tasks.db'),
    '--port',
    String(port),
    '--tools',
    'bench/tenant-tools.ts',
    ...serveArgs,
  ],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
let log = '';
server.stderr.on('data', (c: Buffer) => (log += c.toString()));
server.stdout.on('data', (c: Buffer) => (log += c.toString()));
const adminKey = await waitFor(
  () => /^\s+(cc_[A-Za-z0-9_-]+)$/m.exec(log)?.[1] ?? null,
  'the first admin key',
);
await waitFor(
  async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200 || null,
  'readyz',
);

const keyA = await createKey('tenant-a');
const keyB = await createKey('tenant-b');
FROM.set(keyA, '127.0.0.2');
FROM.set(keyB, '127.0.0.3');
const progress = (line: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

// ------------------------------------------------------------------------------------------------ helpers
/** The fields of the API's answers this bench reads. */
interface Answer {
  task_id?: string;
  status?: string;
  key?: string;
  tasks?: { task_id: string }[];
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

async function waitFor<T>(probe: () => T | null | Promise<T | null>, what: string, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const v = await probe();
    if (v !== null && v !== false) return v;
    await sleep(50);
  }
  throw new Error(`bench:tenants: no ${what} within ${ms} ms; server log:\n${log}`);
}

function agentFor(localAddress: string): http.Agent {
  let agent = agents.get(localAddress);
  if (agent === undefined) {
    agent = new http.Agent({ keepAlive: true, maxSockets: 64, localAddress });
    agents.set(localAddress, agent);
  }
  return agent;
}

function api(
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Answer }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent: agentFor(FROM.get(key) ?? '127.0.0.1'),
        method,
        host: '127.0.0.1',
        port,
        path,
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Answer = {};
          try {
            json = (text === '' ? {} : JSON.parse(text)) as Answer;
          } catch {
            // not JSON (a refused connection's answer): status says enough
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function createKey(tenant: string): Promise<string> {
  const { status, json } = await api(adminKey, 'POST', '/api/v1/keys', {
    tenant,
    role: 'member',
    name: tenant,
  });
  if (status !== 201 && status !== 200)
    throw new Error(`creating a key for ${tenant}: ${status} ${JSON.stringify(json)}`);
  return json.key ?? '';
}

function rssMb(): number {
  try {
    const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Tenant A: submit `return 1`, wait until it ends, then list its tasks; latency of the whole round trip. */
async function tenantA(
  ms: number,
): Promise<{ p50: number; p99: number; rounds: number; errors: number; starved: number }> {
  const samples: number[] = [];
  const parts = { submit: [] as number[], wait: [] as number[], list: [] as number[] };
  let errors = 0;
  let starved = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const t = performance.now();
    const created = await api(keyA, 'POST', '/api/v1/tasks', { code: 'return 1', language: 'javascript' });
    const submitted = performance.now();
    if (created.status !== 201) {
      errors++;
      continue;
    }
    // A task that waits past the round's cap counts as the cap (A starved) and is cancelled.
    const cap = Date.now() + ROUND_CAP_MS;
    for (;;) {
      const view = await api(keyA, 'GET', `/api/v1/tasks/${String(created.json.task_id)}`);
      if (['succeeded', 'failed', 'cancelled'].includes(view.json.status ?? '')) break;
      if (Date.now() > cap) {
        starved++;
        await api(keyA, 'POST', `/api/v1/tasks/${String(created.json.task_id)}/control`, {
          action: 'cancel',
        });
        break;
      }
      await sleep(5);
    }
    const ended = performance.now();
    await api(keyA, 'GET', '/api/v1/tasks?limit=20');
    samples.push(performance.now() - t);
    parts.submit.push(submitted - t);
    parts.wait.push(ended - submitted);
    parts.list.push(performance.now() - ended);
  }
  samples.sort((a, b) => a - b);
  if (DETAIL)
    progress(
      Object.entries(parts)
        .map(
          ([k, v]) =>
            `${k} p50 ${percentile(
              v.sort((a, b) => a - b),
              50,
            ).toFixed(1)} p99 ${percentile(v, 99).toFixed(1)}`,
        )
        .join(', '),
    );
  return {
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    rounds: samples.length,
    errors,
    starved,
  };
}

/** A raw socket that sends a request and never reads the answer. */
function stalled(path: string, key: string, extra = ''): net.Socket {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
  socket.on('error', () => {});
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\n${extra}\r\n`,
  );
  socket.pause();
  return socket;
}

type Stop = () => Promise<void> | void;
type Attack = () => Promise<Stop> | Stop;
const chatty = 'for (let i = 0; i < 200000; i++) console.log("x".repeat(2000) + i); return 1;';
const attacks: Record<string, Attack> = {
  'stalled streams': async () => {
    const { json } = await api(keyB, 'POST', '/api/v1/tasks', { code: chatty, language: 'javascript' });
    const sockets = Array.from({ length: 8 }, () =>
      stalled(`/api/v1/tasks/${String(json.task_id)}/stream`, keyB),
    );
    return async () => {
      for (const s of sockets) s.destroy();
      await api(keyB, 'POST', `/api/v1/tasks/${String(json.task_id)}/control`, { action: 'cancel' });
    };
  },
  'huge tool arguments': async () => {
    const code =
      'const big = "y".repeat(1024 * 1024); for (let i = 0; i < 100; i++) { try { await tools.echo({ text: big }); } catch {} } return 1;';
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        String((await api(keyB, 'POST', '/api/v1/tasks', { code, language: 'javascript' })).json.task_id),
      );
    let reading = true;
    // B also reads its big tasks back, as the review did.
    const reader = (async () => {
      while (reading) for (const id of ids) await api(keyB, 'GET', `/api/v1/tasks/${id}`).catch(() => {});
    })();
    return async () => {
      reading = false;
      await reader;
      for (const id of ids) await api(keyB, 'POST', `/api/v1/tasks/${id}/control`, { action: 'cancel' });
    };
  },
  'priority flood': async () => {
    const task = {
      code: 'let x = 0; for (let i = 0; i < 2e6; i++) x += i; return x;',
      language: 'javascript',
      priority: 100,
    };
    for (let i = 0; i < 2; i++)
      await api(keyB, 'POST', '/api/v1/tasks/batch', { tasks: Array.from({ length: 1000 }, () => task) });
    return async () => {
      // Cancel what is left so the next phase starts with an empty queue.
      for (;;) {
        const { json } = await api(keyB, 'GET', '/api/v1/tasks?status=pending&limit=200');
        const tasks = json.tasks ?? [];
        if (tasks.length === 0) break;
        await Promise.all(
          tasks.map((t) => api(keyB, 'POST', `/api/v1/tasks/${t.task_id}/control`, { action: 'cancel' })),
        );
      }
    };
  },
  'big programs listed': async () => {
    // 100 programs just under the code cap (1 MiB each), then B lists them over and over: a list reads the
    // digests written with each task (ADR 0036), never the programs.
    const code = `return 1; // ${'z'.repeat(1024 * 1024 - 64)}`;
    for (let i = 0; i < 100; i++) await api(keyB, 'POST', '/api/v1/tasks', { code, language: 'javascript' });
    let listing = true;
    const answers = new Map<number, number>();
    const lister = (async () => {
      while (listing) {
        const { status } = await api(keyB, 'GET', '/api/v1/tasks?limit=100').catch(() => ({ status: 0 }));
        answers.set(status, (answers.get(status) ?? 0) + 1);
      }
    })();
    return async () => {
      listing = false;
      await lister;
      if (DETAIL) progress(`B's lists by status: ${JSON.stringify(Object.fromEntries(answers))}`);
    };
  },
  'big pending approvals': async () => {
    // 40 tasks each waiting on a 900 KiB payment request, while B reads its inbox and views: both read the
    // journal summary, where a big request is kept light (ADR 0036).
    const code = 'const memo = "m".repeat(900 * 1024); await tools.pay({ memo }); return 1;';
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { json } = await api(keyB, 'POST', '/api/v1/tasks', { code, language: 'javascript' });
      if (json.task_id !== undefined) ids.push(json.task_id);
    }
    let reading = true;
    const reader = (async () => {
      while (reading) {
        await api(keyB, 'GET', '/api/v1/approvals').catch(() => {});
        for (const id of ids.slice(0, 5)) await api(keyB, 'GET', `/api/v1/tasks/${id}`).catch(() => {});
      }
    })();
    return async () => {
      reading = false;
      await reader;
      for (const id of ids) await api(keyB, 'POST', `/api/v1/tasks/${id}/control`, { action: 'cancel' });
    };
  },
  'hundreds of task-events streams': () => {
    const sockets = Array.from({ length: 300 }, () => stalled('/api/v1/task-events', keyB));
    return () => {
      for (const s of sockets) s.destroy();
    };
  },
  'slow bodies': () => {
    const sockets = Array.from({ length: 200 }, () => {
      const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
      s.on('error', () => {});
      s.write(
        `POST /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${keyB}\r\n` +
          `Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
      return s;
    });
    const drip = setInterval(() => sockets.forEach((s) => s.writable && s.write(' ')), 500);
    return () => {
      clearInterval(drip);
      for (const s of sockets) s.destroy();
    };
  },
};

// ------------------------------------------------------------------------------------------------- phases
const rssSamples: number[] = [];
const sampler = setInterval(() => rssSamples.push(rssMb()), 100);
await tenantA(1_000); // warm-up
await sleep(500);
const baselineRss = rssMb();
console.log(
  `machine: ${os.availableParallelism()} vCPUs (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}; ` +
    `phase ${PHASE_MS} ms${QUICK ? ' (BENCH_QUICK=1)' : ''}${serveArgs.length > 0 ? `; serve ${serveArgs.join(' ')}` : ''}; server RSS at start ${baselineRss.toFixed(0)} MB`,
);
const rows: {
  phase: string;
  p50: number;
  p99: number;
  rounds: number;
  errors: number;
  starved: number;
  peak: number;
}[] = [];
const measure = async (phase: string, attack?: Attack): Promise<void> => {
  progress(`phase: ${phase}`);
  const stop = attack === undefined ? null : await attack();
  if (stop !== null) await sleep(1_000);
  rssSamples.length = 0;
  const a = await tenantA(PHASE_MS);
  const peak = Math.max(...rssSamples, rssMb());
  rows.push({ phase, ...a, peak });
  if (stop !== null) await stop();
  await sleep(1_000);
};
await measure('A alone');
for (const [phase, attack] of Object.entries(attacks))
  if (onlyPhases === undefined || onlyPhases.includes(phase)) await measure(phase, attack);
clearInterval(sampler);

const alone = rows[0]!;
console.log(
  '\nphase                            A p50 ms   A p99 ms   p99 vs alone   A rounds  A errors  A starved   peak RSS MB (+base)',
);
for (const r of rows) {
  const ratio = r.p99 / alone.p99;
  console.log(
    `${r.phase.padEnd(32)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(10)} ` +
      `${`${ratio.toFixed(2)}x ${ratio <= 2 ? 'PASS' : 'MISS'}`.padStart(14)} ${String(r.rounds).padStart(10)} ` +
      `${String(r.errors).padStart(9)} ${String(r.starved).padStart(10)} ${r.peak.toFixed(0).padStart(10)} (+${(r.peak - baselineRss).toFixed(0)}${r.peak - baselineRss <= 200 ? '' : ' MISS'})`,
  );
}
for (const agent of agents.values()) agent.destroy();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await rm(dir, { recursive: true, force: true });
