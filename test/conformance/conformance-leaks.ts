import { expect } from 'vitest';
import { boomTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, describeResult, expectNoHostPaths, expectSucceeded } from './harness.ts';

const MiB = 1024 * 1024;

/** No host path in what the program sees of its own stack, the runner's frames included. */
function expectNoPaths(text: string): void {
  expectNoHostPaths(text);
  for (const needle of ['/tmp/', '/root/', '/home/', process.cwd()]) {
    expect(text, `"${needle}" leaked in: ${text.slice(0, 500)}`).not.toContain(needle);
  }
}

/** Issue 15, class 14: small leaks. Stack traces carry no host path; memory figures are peaks. */
export function registerLeakCases(options: SuiteOptions): void {
  defineGroup(options, 'small leaks: stack traces and memory peaks', (g) => {
    g.program(
      "stack traces (its own, a caught tool error's, the runner's frames) name no host path",
      {
        javascript: `const own = new Error('x').stack;
let caught = '';
try { await tools.boom({}); } catch (e) { caught = String(e.stack); }
let thrown = '';
try { null.x; } catch (e) { thrown = String(e.stack); }
return [own, caught, thrown].join('\\n');`,
        python: `import sys, traceback
def inner():
    return traceback.format_stack()
own = ''.join(inner())
try:
    tools.boom()
except Exception:
    caught = traceback.format_exc()
files = []
f = sys._getframe()
while f is not None:
    files.append(f.f_code.co_filename)
    f = f.f_back
'\\n'.join([own, caught, ' '.join(files), repr(globals().get('__file__'))])`,
      },
      async (src) => {
        const text = expectSucceeded(await g.run(src, { tools: [boomTool()] })) as string;
        expect(text.length).toBeGreaterThan(0);
        expectNoPaths(text);
      },
    );

    g.program(
      'an uncaught error names no host path either',
      {
        javascript: 'function f() { throw new Error("boom"); }\nf();',
        python: 'def f():\n    raise ValueError("boom")\nf()',
      },
      async (src) => {
        const r = await g.run(src);
        expect(r.status, describeResult(r)).toBe('failed');
        expectNoPaths(JSON.stringify(r));
      },
    );

    g.program(
      'the memory reported is the peak: memory allocated and freed before the end counts',
      {
        // Many small allocations (QuickJS is sampled as it runs, not only when a turn ends).
        javascript: `let a = [];
for (let i = 0; i < 300000; i++) a.push('x'.repeat(100) + i);
a = null;
return 1;`,
        python: `x = bytearray(200 * 1024 * 1024)
for i in range(0, len(x), 4096):
    x[i] = 1
del x
1`,
      },
      async (src) => {
        const python = g.language === 'python';
        const r = await g.run(src, { limits: { memoryBytes: (python ? 512 : 64) * MiB } });
        expectSucceeded(r);
        expect(r.resources.memoryBytes).toBeGreaterThanOrEqual((python ? 200 : 30) * MiB);
      },
    );
  });
}
