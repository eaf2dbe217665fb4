import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, createQuickJsDriver, failure, probePython } from '../../src/internal.ts';
import type { HostCall, SandboxDriver } from '../../src/internal.ts';

// Issue 17, item 3: the guest cannot make the host hold an unbounded argument. Over
// `ExecutionLimits.toolArgumentBytes` the driver hands the host the call's size (quickjs: and digest, computed
// in its worker), never the arguments: no decoded copy on the host, and the guest catches the host's answer.

type Lang = 'javascript' | 'python';
const MAX = 4096;
const BIG = 20_000;

const PROGRAMS: Record<Lang, string> = {
  javascript: `
const out = [];
try { await tools.take({ s: 'x'.repeat(${BIG}) }); out.push('took'); } catch (e) { out.push(e.name + ':' + e.code); }
out.push(await tools.take({ s: 'small' }));
return out;`,
  python: `
out = []
try:
    tools.take(s='x' * ${BIG})
    out.append('took')
except ToolError as e:
    out.append('ToolError:' + e.code)
out.append(tools.take(s='small'))
out`,
};

const python = await probePython();
for (const language of ['javascript', 'python'] as const) {
  const skip = language === 'python' && !python.ok;
  if (skip) console.warn(`[argument-bound] python skipped: ${python.reason}`);
  (skip ? describe.skip : describe)(`the driver refuses oversize arguments (${language})`, () => {
    let driver: SandboxDriver;
    beforeAll(() => {
      driver =
        language === 'javascript' ? createQuickJsDriver({ workers: 1 }) : createPythonDriver({ warm: 1 });
    });
    afterAll(() => driver.close());

    it('hands the host their size, not them, and the guest catches TOOL_ARGUMENTS_TOO_LARGE', async () => {
      const calls: HostCall[] = [];
      const result = await driver.execute({
        code: PROGRAMS[language],
        language,
        tools: [{ namespace: 'tools', name: 'take' }],
        limits: { timeoutMs: 20_000, toolArgumentBytes: MAX },
        host: {
          call: (call) => {
            calls.push(call);
            if (call.kind === 'tool' && call.argsTooLarge) {
              const error = failure('TOOL_ARGUMENTS_TOO_LARGE', `${call.argsTooLarge.bytes} bytes`);
              return Promise.resolve({ ok: false, error });
            }
            return Promise.resolve({ ok: true, value: 'ok' });
          },
        },
      });
      expect(result).toMatchObject({
        status: 'succeeded',
        value: ['ToolError:TOOL_ARGUMENTS_TOO_LARGE', 'ok'],
      });
      const [big, small] = calls;
      if (big?.kind !== 'tool' || small?.kind !== 'tool') throw new Error('two tool calls expected');
      expect(big.args).toBeNull();
      expect(big.argsJson).toBeUndefined();
      expect(big.argsTooLarge?.bytes).toBeGreaterThan(BIG);
      if (language === 'javascript') expect(big.argsTooLarge?.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(small.argsTooLarge).toBeUndefined();
      expect(small.args).toEqual({ s: 'small' });
    });
  });
}
