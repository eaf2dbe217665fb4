import { expect } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { ExecutionResult, LogEntry } from '../../src/spec/index.ts';
import { hangTool, newToolLog } from './fixtures.ts';
import type { Group, Source, SuiteOptions } from './harness.ts';
import { defineGroup, expectFailed, expectSucceeded, waitFor } from './harness.ts';

/** Generous bound for "within 200 ms of the abort". */
const PROMPT_MS = 500;

/** Starts `src`, aborts with `reason` once the guest logged 'started', and times the end from the abort. */
async function abortAfterStart(
  g: Group,
  src: Source,
  reason: unknown,
  log = newToolLog(),
): Promise<{ result: ExecutionResult; msAfterAbort: number }> {
  const controller = new AbortController();
  const logs: LogEntry[] = [];
  const pending = g.run(src, {
    tools: [hangTool(log)],
    signal: controller.signal,
    limits: { timeoutMs: 20_000 },
    onLog: (e) => logs.push(e),
  });
  await waitFor(() => logs.some((l) => l.message === 'started'), 10_000);
  await new Promise((r) => setTimeout(r, 50));
  const abortedAt = performance.now();
  controller.abort(reason);
  const result = await pending;
  return { result, msAfterAbort: performance.now() - abortedAt };
}

const LOOP_JS = "console.log('started');\nwhile (true) {}";
const TOOL_JS = "console.log('started');\nawait tools.hang({});\nreturn 'unreachable';";
const LOOP_PY = "print('started')\nwhile True:\n    pass";
const TOOL_PY = "print('started')\ntools.hang()\n'unreachable'";
const LOOP = { javascript: LOOP_JS, python: LOOP_PY };
const TOOL = { javascript: TOOL_JS, python: TOOL_PY };

export function registerInterruptionCases(options: SuiteOptions): void {
  defineGroup(options, 'interruption', (g) => {
    g.program('aborting during a CPU loop is INTERRUPTED, promptly', LOOP, async (src) => {
      const { result, msAfterAbort } = await abortAfterStart(g, src, undefined);
      expectFailed(result, 'INTERRUPTED');
      expect(msAfterAbort).toBeLessThan(PROMPT_MS);
      await g.expectHealthy();
    });

    g.program(
      "aborting while awaiting a tool is INTERRUPTED and aborts the tool's ctx.signal",
      TOOL,
      async (src) => {
        const log = newToolLog();
        const { result, msAfterAbort } = await abortAfterStart(g, src, undefined, log);
        expectFailed(result, 'INTERRUPTED');
        expect(msAfterAbort).toBeLessThan(PROMPT_MS);
        expect(log.signals).toHaveLength(1);
        await waitFor(() => log.signals[0]?.aborted === true, 1_000);
        await g.expectHealthy();
      },
    );

    g.program('an abort reason with a string code gives that code (CodecallError)', LOOP, async (src) => {
      const { result } = await abortAfterStart(g, src, new CodecallError('ABORTED', 'cancelled by the user'));
      expectFailed(result, 'ABORTED');
    });

    g.program('an abort reason with a string code gives that code (plain object)', TOOL, async (src) => {
      const { result } = await abortAfterStart(g, src, { code: 'POOL_CLOSED', message: 'shutting down' });
      expectFailed(result, 'POOL_CLOSED');
    });

    g.program('an abort reason without a code is INTERRUPTED', LOOP, async (src) => {
      const { result } = await abortAfterStart(g, src, new Error('no code here'));
      expectFailed(result, 'INTERRUPTED');
    });

    g.program(
      'an already-aborted signal ends the execution before any tool runs',
      { javascript: "console.log('ran');\nawait tools.hang({});", python: "print('ran')\ntools.hang()" },
      async (src) => {
        const log = newToolLog();
        const controller = new AbortController();
        controller.abort();
        const result = await g.run(src, { tools: [hangTool(log)], signal: controller.signal });
        expectFailed(result, 'INTERRUPTED');
        expect(log.args).toHaveLength(0);
      },
    );

    g.programs(
      'interrupting one execution does not disturb another',
      {
        javascript: {
          loop: LOOP_JS,
          other:
            'let x = 0;\nfor (let i = 0; i < 2e5; i++) x += i;\nawait new Promise((r) => setTimeout(r, 100));\nreturn x;',
        },
        python: {
          loop: LOOP_PY,
          other: 'import time\n\nx = 0\nfor i in range(2 * 10**5):\n    x += i\ntime.sleep(0.1)\nx',
        },
      },
      async (src) => {
        const [interrupted, other] = await Promise.all([
          abortAfterStart(g, src.loop, undefined),
          g.run(src.other),
        ]);
        expectFailed(interrupted.result, 'INTERRUPTED');
        expect(expectSucceeded(other)).toBe(19999900000);
      },
    );
  });
}
