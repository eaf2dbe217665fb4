// Object addresses in the python sandbox (issue 15, class 2): the sandbox runs without address space
// randomisation (setarch -R), so an interpreter with the same history hands out the same addresses: id(), the
// default hash() of objects and the order of a set of objects repeat. Cold starts share their history; pooled
// interpreters differ in how far their prewarm got, so this is not promised across them (README, ADR 0016).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';

const probe = await probePython();

const PROGRAM = `class A: pass
objects = [A() for _ in range(12)]
order = [objects.index(o) for o in set(objects)]
[id(object()), hash(object()), id([]), id(objects[0]), order]`;

describe.skipIf(!probe.ok)(`python object addresses${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  let driver: PythonDriver;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 0, ...(probe.ok ? { probe } : {}) });
    await driver.ready();
  });
  afterAll(() => driver.close());

  it('id(), hash() of objects and the order of a set of objects repeat across cold starts', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = await driver.execute({
        code: PROGRAM,
        language: 'python',
        tools: [],
        seed: 3,
        host: { call: () => Promise.resolve({ ok: true, value: null }) },
      });
      if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
      seen.add(JSON.stringify(r.value));
    }
    expect([...seen]).toHaveLength(1);
  });
});
