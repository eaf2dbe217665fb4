// What ADR 0061 cut from a python sandbox's start, and what must not have changed with it: the interpreter without
// site (the same sys.path), the pool's work ahead (the same random bytes as a cold start), the start message read
// at once.
import { execFile } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult } from '../../src/spec/index.ts';

const probe = await probePython();

/** sys.path of the same interpreter started as usual (with site), the working directory's entry left out. */
function sitePath(python: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    execFile(
      python,
      ['-s', '-c', 'import sys, json; print(json.dumps(sys.path[1:]))'],
      { env: {} },
      (error, stdout) => (error ? reject(new Error(error.message)) : resolve(JSON.parse(stdout) as string[])),
    ),
  );
}

describe.skipIf(!probe.ok)(
  `python sandbox start costs${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    const drivers: PythonDriver[] = [];
    afterAll(() => Promise.all(drivers.map((d) => d.close())));
    const make = async (warm: number) => {
      const driver = createPythonDriver({ warm, ...(probe.ok ? { probe } : {}) });
      drivers.push(driver);
      await driver.ready();
      return driver;
    };
    const run = (driver: PythonDriver, code: string, seed?: number): Promise<ExecutionResult> =>
      driver.execute({
        code,
        language: 'python',
        tools: [],
        host: { call: () => Promise.resolve({ ok: true, value: null }) },
        ...(seed === undefined ? {} : { seed }),
      });
    const value = (r: ExecutionResult) => {
      if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
      return r.value;
    };

    it("runs without site, with site's sys.path and exit/quit/help, and none of the .pth files' imports", async () => {
      const cold = await make(0);
      const seen = value(
        await run(
          cold,
          "import sys\n[sys.flags.no_site, sys.path, callable(exit), callable(quit), callable(help), sorted(m for m in ('sitecustomize', '_distutils_hack', 'certifi') if m in sys.modules)]",
        ),
      ) as [number, string[], boolean, boolean, boolean, string[]];
      expect(seen[0]).toBe(1);
      expect(seen[1]).toEqual(await sitePath(probe.ok ? probe.pythonPath : ''));
      expect(seen.slice(2)).toEqual([true, true, true, []]);
      // exit() ends the program successfully, as with site.
      expect(await run(cold, 'print(1)\nexit()\nprint(2)')).toMatchObject({
        status: 'succeeded',
        value: null,
      });
    });

    // The seeded files are filled and the generator drawn while a pooled interpreter waits (for seed 0), then the
    // pool imports asyncio, which may draw from it: the program must read what a cold start reads.
    const READS =
      "import os, random, sys\nwith open('/dev/urandom', 'rb') as f:\n    a = f.read(32).hex()\n" +
      "with open('/proc/sys/kernel/random/uuid') as f:\n    u = f.read()\n";
    const VALUES = '[a, u, os.urandom(16).hex(), random.random()]';

    it('a pooled interpreter reads the same random bytes as a cold start, for the seed it filled ahead and another', async () => {
      const cold = await make(0);
      const warm = await make(1);
      for (const seed of [0, 7]) {
        // Past the pool's prewarm delay (ADR 0061): asyncio and subprocess are imported by then.
        await new Promise((r) => setTimeout(r, 600));
        const pooled = value(await run(warm, `${READS}['asyncio' in sys.modules, ${VALUES}]`, seed));
        const fresh = value(await run(cold, `${READS}[True, ${VALUES}]`, seed));
        expect(pooled).toEqual(fresh);
      }
    });

    it('a start message that arrives with the prewarm one runs at once, without the prewarm imports', async () => {
      const driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      drivers.push(driver);
      // The pool's first interpreter is handed out as soon as it is up: the start follows the prewarm message at
      // once, while the runner still imports (Python's text reader held both where select() did not see them).
      void driver.ready();
      const r = await run(
        driver,
        "import sys\nsorted(m for m in ('asyncio', 'subprocess') if m in sys.modules)",
      );
      expect(value(r)).toEqual([]);
    });
  },
);
