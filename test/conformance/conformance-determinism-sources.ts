import { expect } from 'vitest';
import { echoTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, describeResult, expectSucceeded } from './harness.ts';
import { PYTHON_SOURCES, readTwice } from './python-sources.ts';

const EPOCH = 1_700_000_000_000;

/** The same clock script for every run: a second further at every read. */
function script(): () => number {
  let t = EPOCH;
  return () => (t += 1000);
}

/**
 * Issue 15, class 2: everything a program can read that would differ on a replay comes from the seed and the
 * journaled clock. Each source is read in two sandboxes with the same seed and clock script (a replay sees the
 * same) and must read the same, before and after a tool call; the durable test (test/durable/
 * python-determinism.test.ts) runs them through pause, resume and crash recovery.
 */
export function registerDeterminismSourceCases(options: SuiteOptions): void {
  // The JavaScript set (Math.random, Date.now) is the determinism group's; these are CPython's own sources.
  if (options.language !== 'python') return;
  defineGroup(options, 'determinism: every source a python program reads', (g) => {
    for (const [name, expr] of Object.entries(PYTHON_SOURCES)) {
      g.program(
        `${name}: the same in a second sandbox with the same seed and clock`,
        { python: readTwice(expr) },
        async (src) => {
          const run = async (seed: number) =>
            expectSucceeded(await g.run(src, { seed, clock: script(), tools: [echoTool()] })) as string[];
          const first = await run(7);
          const again = await run(7);
          expect(again, name).toEqual(first);
        },
      );
    }

    g.program(
      'the seeded sources differ with another seed',
      {
        python: `import os, uuid, tempfile
[os.urandom(8).hex(), os.getrandom(8).hex(), open('/dev/urandom', 'rb').read(8).hex(), str(uuid.uuid4()),
 open('/proc/sys/kernel/random/uuid').read(), tempfile.mktemp()]`,
      },
      async (src) => {
        const a = expectSucceeded(await g.run(src, { seed: 1 })) as string[];
        const b = expectSucceeded(await g.run(src, { seed: 2 })) as string[];
        a.forEach((value, i) => expect(value).not.toBe(b[i]));
      },
    );

    g.program(
      "the seeded files are the program's to write, within the sandbox's budgets (the watchdog's, or the cgroup's)",
      {
        python: `import time
block = b'x' * (64 * 1024 * 1024)
open('/workspace/x', 'wb').write(block[:8 * 1024 * 1024])
for path in ('/dev/urandom', '/dev/random', '/proc/sys/kernel/random/uuid', '/proc/sys/kernel/random/boot_id'):
    with open(path, 'wb') as f:
        for _ in range(4):
            f.write(block)
select = __import__('select')
select.select([], [], [], 5)
'not stopped'`,
      },
      async (src) => {
        const r = await g.run(src, { limits: { memoryBytes: 512 * 1024 * 1024, timeoutMs: 20_000 } });
        expect(r.status, describeResult(r)).toBe('failed');
        // 1 GiB and 8 MiB: past the watchdog's workspace budget (1 GiB); with cgroups, their memory limit comes first.
        if (r.status === 'failed') expect(['FILE_LIMIT', 'MEMORY_LIMIT']).toContain(r.error.code);
      },
      30_000,
    );

    g.program(
      'the clocks follow the journaled clock: a CPU loop does not move them, a tool outcome does',
      {
        python: `import time, datetime
a = [time.time(), time.perf_counter(), time.monotonic(), time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.process_time()]
x = sum(range(10**6))
b = [time.time(), time.perf_counter(), time.monotonic(), time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.process_time()]
tools.echo()
c = [time.time(), datetime.datetime.now(datetime.timezone.utc).timestamp(), time.process_time()]
local = [time.strftime('%Y-%m-%d %H:%M:%S'), time.asctime(), time.ctime(), tuple(time.localtime())[:6], tuple(time.gmtime())[:6]]
{'a': a, 'b': b, 'c': c, 'local': local}`,
      },
      async (src) => {
        const v = expectSucceeded(await g.run(src, { clock: script(), tools: [echoTool()] })) as Record<
          string,
          number[]
        >;
        expect(v.b).toEqual(v.a);
        expect(v.a?.[0]).toBe((EPOCH + 1000) / 1000);
        expect(v.c?.[0]).toBeGreaterThan(v.a?.[0] as number);
        expect(v.c?.[1]).toBe(v.c?.[0]);
        // CPU clocks say the journaled time since the program started.
        expect(v.c?.[2]).toBe((v.c?.[0] as number) - (v.a?.[0] as number));
        // Local time is UTC, and the functions that default to now read the journaled clock (2023-11-14 22:13:22).
        expect(v.local).toEqual([
          '2023-11-14 22:13:22',
          'Tue Nov 14 22:13:22 2023',
          'Tue Nov 14 22:13:22 2023',
          [2023, 11, 14, 22, 13, 22],
          [2023, 11, 14, 22, 13, 22],
        ]);
      },
    );
  });
}
