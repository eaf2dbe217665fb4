// The python driver with cgroups (where the machine has them and we are root): a fork bomb is capped and ended
// with the sandbox, and nothing of it outlives the execution.
import { readdirSync, existsSync } from 'node:fs';
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
    // Only the warm interpreter's group is left; the bomb's group (and its spinning children) are gone.
    expect(ours().length).toBeLessThanOrEqual(1);
    const after = await driver.execute({
      code: '1 + 1',
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
    });
    expect(after.status === 'succeeded' && after.value).toBe(2);
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
