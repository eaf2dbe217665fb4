// The service half of bench:postgres: tasks accepted/s and completed/s with 1, 2 and 3 `codecall serve` nodes
// (real processes of the built CLI) on one PostgreSQL database, against 1 node on a SQLite file. Each run gets a
// database (or file) of its own; submits go round-robin over the nodes from a pool of concurrent clients.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createChaosDatabase } from '../test/chaos/chaos-db.ts';

const root = new URL('..', import.meta.url).pathname;

interface Node {
  readonly child: ChildProcess;
  readonly base: string;
}

async function startNode(db: string): Promise<Node> {
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin/codecall.js'),
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--insecure-no-auth',
      '--concurrency',
      '8',
    ],
    { env: { ...process.env, CODECALL_PYTHON: 'false' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  for (let i = 0; i < 600; i++) {
    const base = /serving on (http:\/\/[^\s]+)/.exec(stderr)?.[1];
    if (base) return { child, base };
    if (child.exitCode !== null) throw new Error(`serve exited: ${stderr}`);
    await sleep(50);
  }
  throw new Error(`serve did not start: ${stderr}`);
}

/** Submits for `ms` from `clients` concurrent clients, then waits for every task to end. */
async function measure(
  nodes: readonly Node[],
  ms: number,
  clients: number,
): Promise<{ accepted: number; completed: number }> {
  const ids: string[] = [];
  let next = 0;
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const node = nodes[next++ % nodes.length] as Node;
        const r = await fetch(`${node.base}/api/v1/tasks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code: 'return 1' }),
        });
        if (r.status !== 201 && r.status !== 202) throw new Error(`submit: ${r.status} ${await r.text()}`);
        ids.push(((await r.json()) as { task_id: string }).task_id);
      }
    }),
  );
  const submitted = performance.now();
  const first = nodes[0] as Node;
  for (;;) {
    const r = await fetch(`${first.base}/api/v1/tasks?status=pending&limit=1`);
    const running = await fetch(`${first.base}/api/v1/tasks?status=running&limit=1`);
    const pending =
      ((await r.json()) as { tasks: unknown[] }).tasks.length +
      ((await running.json()) as { tasks: unknown[] }).tasks.length;
    if (pending === 0) break;
    await sleep(20);
  }
  const done = performance.now();
  return {
    accepted: (ids.length * 1000) / (submitted - started),
    completed: (ids.length * 1000) / (done - started),
  };
}

export async function serviceThroughput(options: {
  url: string;
  quick: boolean;
  report: (metric: string, sqlite: number, postgres: number, better: 'higher' | 'lower') => void;
}): Promise<void> {
  const ms = options.quick ? 2000 : 5000;
  const clients = 16;
  const dir = await mkdtemp(join(os.tmpdir(), 'bench-pg-service-'));
  const stopAll = (nodes: readonly Node[]): void => {
    for (const n of nodes) n.child.kill('SIGKILL');
  };
  try {
    const single = [await startNode(join(dir, 'tasks.db'))];
    const base = await measure(single, ms, clients);
    stopAll(single);
    for (const count of [1, 2, 3]) {
      const db = await createChaosDatabase(options.url, `bench_${process.pid}_${count}`);
      const nodes: Node[] = [];
      try {
        for (let i = 0; i < count; i++) nodes.push(await startNode(db.url));
        const got = await measure(nodes, ms, clients);
        options.report(
          `tasks accepted/s, ${count} node(s) vs 1 sqlite`,
          base.accepted,
          got.accepted,
          'higher',
        );
        options.report(
          `tasks completed/s, ${count} node(s) vs 1 sqlite`,
          base.completed,
          got.completed,
          'higher',
        );
      } finally {
        stopAll(nodes);
        await sleep(200);
        await db.drop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
