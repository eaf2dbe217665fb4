// The python driver with cgroups (where the machine has them and we are root): a fork bomb is capped and ended
// with the sandbox, and nothing of it outlives the execution.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCgroups } from '../../src/sandbox/python/cgroups.ts';
import type { CgroupManager } from '../../src/sandbox/python/cgroups.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';

const probe = await probePython();
const cgroups = process.getuid?.() === 0 && probe.ok ? await detectCgroups() : null;
const usable = cgroups?.manager?.version === 1 ? '/sys/fs/cgroup/pids/codecall' : '/sys/fs/cgroup/codecall';
const why = !probe.ok
  ? probe.reason
  : !cgroups?.manager
    ? cgroups && 'reason' in cgroups
      ? cgroups.reason
      : 'not root'
    : '';

function ours(): string[] {
  if (!existsSync(usable)) return [];
  return readdirSync(usable).filter((d) => d.startsWith(`py-${process.pid}-`));
}

describe.skipIf(why !== '')(`python driver in cgroups${why ? ` (skipped: ${why})` : ''}`, () => {
  let driver: PythonDriver;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 1 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  it('caps a fork bomb at the group’s pids limit and ends every process of it', async () => {
    const bomb = await driver.execute({
      code: 'import os\nn = 0\nwhile True:\n    try:\n        if os.fork() == 0:\n            while True: pass\n        n += 1\n    except OSError:\n        break\nn',
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
      limits: { timeoutMs: 10_000 },
    });
    expect(bomb.status).toBe('succeeded');
    // Fewer than the group allows (the interpreter and bwrap count too), and the RLIMIT_NPROC may cap it first.
    expect(bomb.status === 'succeeded' && (bomb.value as number)).toBeLessThan(64);
    await new Promise((r) => setTimeout(r, 300));
    // Only the warm interpreter's group and the one parked for a cold start are left; the bomb's group (and its
    // spinning children) are gone.
    expect(ours().length).toBeLessThanOrEqual(2);
    const after = await driver.execute({
      code: '1 + 1',
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
    });
    expect(after.status === 'succeeded' && after.value).toBe(2);
  });
});

describe.skipIf(why !== '')(`python cold starts in cgroups${why ? ` (skipped: ${why})` : ''}`, () => {
  it('keeps one sandbox parked in its cgroup for cold starts; one killed while parked does not fail a run', async () => {
    const cold = createPythonDriver({ warm: 0 });
    const run = () =>
      cold.execute({
        code: '6 * 7',
        language: 'python',
        tools: [],
        host: { call: () => Promise.resolve({ ok: true, value: null }) },
      });
    const before = new Set(ours()); // the first driver's
    const procsOf = (group: string) =>
      existsSync(`${usable}/${group}`)
        ? readFileSync(`${usable}/${group}/cgroup.procs`, 'utf8').split('\n').filter(Boolean)
        : [];
    // The cold driver's groups with a process in them.
    const parked = async () => {
      const found = () => ours().filter((g) => !before.has(g) && procsOf(g).length > 0);
      for (let i = 0; i < 100 && found().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      return found();
    };
    try {
      await cold.ready();
      // ready() parked one: a shell in its own group, waiting.
      const [group] = await parked();
      expect(group).toBeDefined();
      const procs = procsOf(group ?? '');
      expect(procs).toHaveLength(1);
      expect(readFileSync(`/proc/${procs[0]}/cmdline`, 'utf8')).toMatch(/^\/bin\/sh\0-c\0read _/);
      process.kill(Number(procs[0]), 'SIGKILL');
      await new Promise((r) => setTimeout(r, 50));
      const first = await run();
      expect(first.status === 'succeeded' && first.value).toBe(42);
      // The next cold start has a parked sandbox again, and uses it.
      expect((await parked()).length).toBeGreaterThan(0);
      const second = await run();
      expect(second.status === 'succeeded' && second.value).toBe(42);
    } finally {
      await cold.close();
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(ours().filter((g) => !before.has(g))).toEqual([]);
  });
});

describe.skipIf(!probe.ok)(
  `python sandboxes when a cgroup cannot be had${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    it('run on their rlimits when the group cannot be made, or the process cannot join it', async () => {
      const { PythonProcess } = await import('../../src/sandbox/python/python-process.ts');
      if (!probe.ok) return;
      const destroyed: string[] = [];
      const failing = (where: 'create' | 'add'): CgroupManager => ({
        version: 2,
        create: (name) =>
          where === 'create'
            ? Promise.reject(new Error('EACCES'))
            : Promise.resolve({
                path: name,
                add: () => Promise.reject(new Error('EBUSY')),
                setMemory: () => Promise.resolve(),
                memoryPeakBytes: () => Promise.resolve(null),
                oomKilled: () => Promise.resolve(false),
                destroy: () => {
                  destroyed.push(name);
                  return Promise.resolve();
                },
              }),
      });
      for (const where of ['create', 'add'] as const) {
        const proc = await PythonProcess.start({
          bwrap: probe.bwrapPath,
          python: probe.pythonPath,
          safePathFlag: probe.safePathFlag,
          workspaceBytes: 1024 * 1024,
          cgroups: { manager: failing(where), limits: { pids: 8 } },
        });
        expect(proc.alive).toBe(true);
        expect(await proc.limitMemory(1024 * 1024)).toBe(false);
        await proc.dispose();
      }
      expect(destroyed).toHaveLength(1);
    });
  },
);
