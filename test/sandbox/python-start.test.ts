// How a python sandbox starts: what a cold start imports (its cost), what the warm pool prepares, the CPU it reports.
import { afterAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython, pythonEngine } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult } from '../../src/spec/index.ts';

const probe = await probePython();
const SEEN =
  "import sys\nsorted(m for m in ('json', 're', 'ast', 'asyncio', '_ctypes', 'ctypes', 'datetime') if m in sys.modules)";

describe.skipIf(!probe.ok)(`python sandbox start${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  const drivers: PythonDriver[] = [];
  afterAll(() => Promise.all(drivers.map((d) => d.close())));
  const make = async (warm: number) => {
    const driver = createPythonDriver({ warm, ...(probe.ok ? { probe } : {}) });
    drivers.push(driver);
    await driver.ready();
    return driver;
  };
  const run = (driver: PythonDriver, code: string, allowSubprocesses = true): Promise<ExecutionResult> =>
    driver.execute({
      code,
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
      // Processes allowed: the no-exec filter (which needs _ctypes) is not installed, so _ctypes shows prewarming.
      policy: { allowSubprocesses },
    });
  const value = (r: ExecutionResult) => {
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  };

  it('a cold start imports neither json, re, ast, ctypes nor datetime (their C halves serve the runner)', async () => {
    const cold = await make(0);
    expect(value(await run(cold, SEEN))).toEqual([]);
  });

  it('the no-exec filter goes in through _ctypes alone (the ctypes package is not loaded) and holds', async () => {
    const cold = await make(0);
    expect(value(await run(cold, SEEN, false))).toEqual(['_ctypes']);
    const tried = await run(
      cold,
      "import posix\ntry:\n    posix.execv('/bin/true', ['true'])\nexcept PermissionError as e:\n    r = e.errno\nr",
      false,
    );
    expect(value(tried)).toBe(1);
  });

  it('a pooled interpreter imports asyncio and _ctypes while it waits', async () => {
    const warm = await make(1);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(value(await run(warm, SEEN))).toEqual(expect.arrayContaining(['asyncio', '_ctypes']));
  });

  it("the CPU time reported is the program's, not the interpreter's start", async () => {
    const cold = await make(0);
    const idle = await run(cold, '1', false);
    const busy = await run(cold, 'x = 0\nfor i in range(3_000_000):\n    x += i\nx', false);
    expect(value(busy)).toBe(4_499_998_500_000);
    expect(idle.resources.cpuMs ?? Infinity).toBeLessThan(busy.resources.cpuMs ?? 0);
    expect(busy.resources.cpuMs ?? 0).toBeGreaterThan(50);
  });
});

describe.skipIf(!probe.ok)(`python driver engine${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  it('names the interpreter, bubblewrap and image versions from the start when given a probe, and never changes', async () => {
    if (!probe.ok) return;
    const driver = createPythonDriver({ warm: 0, probe });
    try {
      const before = driver.engine;
      expect(before).toBe(pythonEngine(probe));
      expect(before.startsWith(`cpython-${probe.python}+bwrap-${probe.bwrap}`)).toBe(true);
      await driver.execute({
        code: '1',
        language: 'python',
        tools: [],
        host: { call: () => Promise.reject(new Error('no')) },
      });
      // A task's manifest records the engine when it is claimed: the same before and after the first execution.
      expect(driver.engine).toBe(before);
    } finally {
      await driver.close();
    }
  });
});
