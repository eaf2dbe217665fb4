import { expect } from 'vitest';
import { echoTool, sleepTool } from './fixtures.ts';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectSucceeded } from './harness.ts';

/** What a tool call from a thread other than the main one raises (guest-host-calls.ts). */
const REFUSED = 'a tool call from a thread other than the main thread is not supported';

/** Runs `call(i)` (a tool call) the way each variant does and returns what every call gave. */
const VARIANTS: Record<string, string> = {
  'threading.Thread': `t = threading.Thread(target=lambda: out.append(attempt(0)))
t.start()
t.join()`,
  'ThreadPoolExecutor.submit': `with cf.ThreadPoolExecutor(2) as ex:
    out.extend(f.result() for f in [ex.submit(attempt, i) for i in range(4)])`,
  'ThreadPoolExecutor.map': `with cf.ThreadPoolExecutor(4) as ex:
    out.extend(ex.map(attempt, range(8)))`,
  'many threads': `ts = [threading.Thread(target=lambda i=i: out.append(attempt(i))) for i in range(16)]
for t in ts: t.start()
for t in ts: t.join()`,
  'a thread started before the main thread calls': `t = threading.Thread(target=lambda: out.append(attempt(1)))
t.start()
out.append(tools.sleep(ms=20) and 'main')
t.join()`,
  'asyncio in a thread': `def in_thread():
    import asyncio
    async def go():
        return await tools.echo_async(i=0)
    try:
        out.append(asyncio.run(go()))
    except RuntimeError as e:
        out.append('refused' if str(e).startswith(${JSON.stringify(REFUSED)}) else repr(e))
t = threading.Thread(target=in_thread)
t.start()
t.join()`,
};

const program = (body: string) => `import threading, concurrent.futures as cf
out = []
def attempt(i):
    try:
        return tools.echo(i=i)
    except RuntimeError as e:
        return 'refused' if str(e).startswith(${JSON.stringify(REFUSED)}) else repr(e)
${body}
after = tools.echo(i=99)
[sorted(set(map(str, out))), after]`;

/**
 * Issue 15, class 10: a tool call from a Python thread is refused with a clear error (the host could not order
 * calls from real threads the same way twice; two threads reading the host's pipe hung about one run in three).
 * Each variant runs ten times in one case, so a hang or a lost delivery would show; the main thread's calls
 * still work after.
 */
export function registerThreadCases(options: SuiteOptions): void {
  if (options.language !== 'python') return;
  defineGroup(options, 'tool calls from python threads', (g) => {
    for (const [name, body] of Object.entries(VARIANTS)) {
      g.program(
        `${name}: refused with a clear error, every time; the main thread's calls go on`,
        { python: program(body) },
        async (src) => {
          for (let i = 0; i < 10; i++) {
            const r = await g.run(src, { tools: [echoTool(), sleepTool()], limits: { timeoutMs: 5_000 } });
            const [seen, after] = expectSucceeded(r) as [string[], unknown];
            expect(seen.filter((s) => s !== 'main')).toEqual(['refused']);
            expect(after).toEqual({ i: 99 });
          }
        },
        90_000,
      );
    }

    g.program(
      'uncaught in a ThreadPoolExecutor future, it fails the program with that message',
      {
        python: `import concurrent.futures as cf
with cf.ThreadPoolExecutor(2) as ex:
    ex.submit(tools.echo, i=1).result()`,
      },
      async (src) => {
        const error = expectFailed(await g.run(src, { tools: [echoTool()] }), 'GUEST_ERROR');
        expect(error.name).toBe('RuntimeError');
        expect(error.message).toContain(REFUSED);
        expect(error.message).toContain('_async');
      },
    );

    g.program(
      'time.sleep in a thread does not go to the host (a real sleep) and does not move the clock',
      {
        python: `import threading, time
t0 = time.time()
t = threading.Thread(target=time.sleep, args=(0.01,))
t.start()
t.join()
time.time() == t0`,
      },
      async (src) => {
        expect(expectSucceeded(await g.run(src, { clock: () => 1_700_000_000_000 }))).toBe(true);
      },
    );
  });
}
