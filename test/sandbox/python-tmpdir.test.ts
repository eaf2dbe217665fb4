// A TMPDIR the sandbox's uid cannot reach (under a 0700 directory, as a CLI test's or a user's home temp can be)
// must not stop the python sandbox from starting: bwrap binds files from there into it (proc-masks.ts).
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import { traversableByOthers } from '../../src/sandbox/python/proc-masks.ts';

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `python sandbox under a private TMPDIR${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let outer = '';
    let inner = '';
    const saved = process.env.TMPDIR;
    beforeAll(async () => {
      outer = await mkdtemp(join(tmpdir(), 'codecall-private-'));
      await chmod(outer, 0o700);
      inner = join(outer, 'tmp');
      await mkdir(inner, { mode: 0o777 });
    });
    afterAll(async () => {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      await rm(outer, { recursive: true, force: true });
    });

    it('knows the private directory is out of reach, and runs a program anyway', async () => {
      expect(traversableByOthers(inner)).toBe(false);
      expect(traversableByOthers('/')).toBe(true);
      process.env.TMPDIR = inner;
      const driver = createPythonDriver({ warm: 0, ...(probe.ok ? { probe } : {}) });
      try {
        await driver.ready();
        const result = await driver.execute({
          code: 'print("hi")\n6 * 7',
          language: 'python',
          tools: [],
          host: { call: () => Promise.resolve({ ok: true, value: null }) },
        });
        expect(result).toMatchObject({ status: 'succeeded', value: 42 });
      } finally {
        await driver.close();
      }
    });
  },
);
