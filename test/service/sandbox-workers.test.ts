// A guest's synchronous code holds its sandbox thread. The service starts a quickjs thread per run slot
// (sandboxWorkers, ADR 0033), so tasks spinning in every CPU's thread do not hold another task behind them; those
// threads run at a lower priority (sandboxNice) than the event loop.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';
import { loadConfig, sandboxWorkerCount } from '../../src/service/index.ts';

const cpus = availableParallelism();

/** This process's threads at a nice value (Linux: /proc/self/task/TID/stat, field 19). */
function threadsAtNice(nice: number): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === nice;
  }).length;
}

describe('sandboxWorkers', () => {
  it('defaults to one thread per run slot, at least one per CPU, at most 32; a set value wins', () => {
    expect(sandboxWorkerCount({ concurrency: 4, sandboxWorkers: null }, 2)).toBe(4);
    expect(sandboxWorkerCount({ concurrency: 4, sandboxWorkers: null }, 8)).toBe(8);
    expect(sandboxWorkerCount({ concurrency: 500, sandboxWorkers: null }, 2)).toBe(32);
    expect(sandboxWorkerCount({ concurrency: 500, sandboxWorkers: 3 }, 2)).toBe(3);
    const config = loadConfig({ env: { CODECALL_SANDBOX_WORKERS: '6' }, flags: {} });
    expect(config.sandboxWorkers).toBe(6);
    expect(() => loadConfig({ env: {}, flags: { sandboxWorkers: '0' } })).toThrow(/sandboxWorkers/);
  });
});

describe('a task while CPU-bound tasks hold a thread per CPU', () => {
  // One slot more than there are CPUs: before, the pool had a thread per CPU and the last task shared one.
  const slots = cpus + 1;
  let dir: string;
  let service: Service;
  const api = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${service.address}/api/v1${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const statusOf = async (id: string): Promise<string> => String((await api('GET', `/tasks/${id}`)).status);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-sandbox-workers-'));
    const config = loadConfig({
      env: {},
      flags: {
        port: '0',
        db: join(dir, 'tasks.db'),
        insecureNoAuth: true,
        python: false,
        concurrency: String(slots),
        tenantConcurrency: String(slots),
        sandboxNice: '7',
      },
    });
    service = await startService(config, { log: () => undefined, model: null });
  });
  afterAll(async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.runIf(process.platform === 'linux')('runs the sandbox threads, and only them, at sandboxNice', () => {
    expect(threadsAtNice(7)).toBe(slots);
    expect(threadsAtNice(0)).toBeGreaterThan(0);
  });

  it('runs at once, without waiting for them to end', { timeout: 120_000 }, async () => {
    const spinners: string[] = [];
    for (let i = 0; i < cpus; i++) {
      const created = await api('POST', '/tasks', {
        code: 'for (;;) {}',
        language: 'javascript',
        tool_constraints: { timeout_seconds: 600, cpu_seconds: 600 },
      });
      spinners.push(String(created.task_id));
    }
    try {
      for (let i = 0; i < 600; i++) {
        const states = await Promise.all(spinners.map(statusOf));
        if (states.every((s) => s === 'running')) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const quick = String(
        (await api('POST', '/tasks', { code: 'return 1', language: 'javascript' })).task_id,
      );
      // Generous for a loaded machine, far below the spinners' 600 s (which held it before).
      let status = '';
      for (let i = 0; i < 1200 && status !== 'succeeded' && status !== 'failed'; i++) {
        status = await statusOf(quick);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe('succeeded');
    } finally {
      await Promise.all(spinners.map((id) => api('POST', `/tasks/${id}/control`, { action: 'cancel' })));
    }
  });
});
