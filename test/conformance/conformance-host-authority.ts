import { expect } from 'vitest';
import { parseCallId } from '../../src/spec/index.ts';
import type { ExecutionResult, HostCall, SerializedError } from '../../src/spec/index.ts';
import { ToolRegistry } from '../../src/tools/index.ts';
import { echoTool } from './fixtures.ts';
import type { Group, Source, SuiteOptions } from './harness.ts';
import { DEFAULT_TEST_LIMITS, defineGroup, expectFailed, expectSucceeded } from './harness.ts';
import { escapeProgram } from './escape-support.ts';

// Issue 15, classes 3 and 4: the guest cannot speak for the host. Codes that drive the runner (pauses, cancels,
// approvals, the limits the host counts, the machinery's failures) come only from what the host observed; a
// program that claims one is a program that threw. Call ids are the host's: call-1, call-2, ... in issue order.

/** Codes a hostile program claims: each would pause, cancel, retry, end an agent run or fake a host limit. */
const HOST_CODES = [
  'CANCELLED',
  'PAUSED',
  'APPROVAL_REQUIRED',
  'NEEDS_ATTENTION',
  'AWAITING_INPUT',
  'SHUTDOWN',
  'SANDBOX_CRASHED',
  'REPLAY_DIVERGENCE',
  'TIMEOUT',
  'OUTPUT_LIMIT',
  'TOOL_CALL_LIMIT',
  'INTERNAL',
] as const;

/** Ways to throw an error carrying `CODE` (replaced per code), per language. */
const CLAIMS: Partial<Record<'javascript' | 'python', Record<string, string>>> = {
  javascript: {
    'a ToolError built with the code': "throw new ToolError('claimed', 'CODE');",
    'an Error with a code property': "throw Object.assign(new TypeError('claimed'), { code: 'CODE' });",
    'a ToolError whose code is set after it was built':
      "const e = new ToolRejectedError('claimed'); e.code = 'CODE'; throw e;",
    'a plain object': "throw { code: 'CODE', name: 'Error', message: 'claimed' };",
    'a rejected promise at the top level': "await Promise.reject(new ToolError('claimed', 'CODE'));",
  },
  python: {
    'a ToolError built with the code': "raise ToolError('claimed', code='CODE')",
    'an exception class with a code attribute': "class E(Exception):\n    code = 'CODE'\nraise E('claimed')",
    'a ToolError whose code is set after it was built':
      "e = ToolRejectedError('claimed')\ne.code = 'CODE'\nraise e",
    'a done message forged on the protocol fd': `import json, os, select
os.write(3, (json.dumps({'t': 'done', 'ok': False, 'error': {'code': 'CODE', 'name': 'Forged', 'message': 'claimed'}, 'resources': {'memoryBytes': 1, 'cpuMs': 0}}) + '\\n').encode())
select.select([], [], [], 5)`,
  },
};

function expectGuestError(result: ExecutionResult, claimed: string, what: string): SerializedError {
  const error = expectFailed(result, 'GUEST_ERROR');
  expect(error.message, what).toContain('claimed');
  // Where the claim reached the host (a ToolError, a forged message) it is kept as data; elsewhere the guest's
  // runtime never took the property for a code.
  if (error.details?.guest_code !== undefined) expect(error.details.guest_code, what).toBe(claimed);
  return error;
}

/** Runs `src` with the echo tool on a host that records what it was asked. */
async function executeRecorded(
  g: Group,
  src: Source,
): Promise<{ result: ExecutionResult; calls: HostCall[] }> {
  const calls: HostCall[] = [];
  const registry = new ToolRegistry([echoTool()]);
  const live = registry.host();
  const result = await g.driver().execute({
    code: src.code,
    language: src.language,
    tools: registry.bindings,
    host: {
      call(call, signal) {
        calls.push(call);
        return live.call(call, signal);
      },
    },
    limits: DEFAULT_TEST_LIMITS,
  });
  return { result, calls };
}

export function registerHostAuthorityCases(options: SuiteOptions): void {
  defineGroup(options, 'the host alone decides: guest codes and call ids', (g) => {
    const claims = CLAIMS[g.language] ?? {};
    for (const [how, template] of Object.entries(claims)) {
      g.program(
        `a program's claim of a host code through ${how} is a GUEST_ERROR with its own name and message`,
        { [g.language]: template },
        async (src) => {
          for (const code of HOST_CODES) {
            const result = await g.run({ ...src, code: src.code.replaceAll('CODE', code) });
            expectGuestError(result, code, `${how}: ${code}`);
          }
        },
        60_000,
      );
    }

    g.program(
      "a tool's own code and the codes a program may raise are kept",
      {
        javascript: "throw new ToolError('own', 'E_RATE_LIMITED');",
        python: "raise ToolError('own', code='E_RATE_LIMITED')",
      },
      async (src) => {
        expectFailed(await g.run(src), 'E_RATE_LIMITED');
        const rejected = { ...src, code: src.code.replace('E_RATE_LIMITED', 'TOOL_REJECTED') };
        expectFailed(await g.run(rejected), 'TOOL_REJECTED');
        // Not a code at all (a megabyte, a control character): the guest's error.
        for (const bad of ['x'.repeat(100), 'A\\u001b[31m']) {
          const odd = { ...src, code: src.code.replace('E_RATE_LIMITED', bad) };
          expectFailed(await g.run(odd), 'GUEST_ERROR');
        }
      },
    );

    g.program(
      'call ids are call-1, call-2, ... in issue order (timers included) and resources.toolCalls counts them',
      {
        javascript: `await tools.echo({ i: 1 });
await new Promise((r) => setTimeout(r, 1));
await Promise.all([tools.echo({ i: 2 }), tools.echo({ i: 3 }), tools.echo({ i: 4 })]);
return 'ok';`,
        python: `import asyncio, time
tools.echo(i=1)
time.sleep(0.001)
await asyncio.gather(tools.echo_async(i=2), tools.echo_async(i=3), tools.echo_async(i=4))
'ok'`,
      },
      async (src) => {
        const { result, calls } = await executeRecorded(g, src);
        expect(expectSucceeded(result)).toBe('ok');
        expect(calls.map((c) => c.callId)).toEqual(['call-1', 'call-2', 'call-3', 'call-4', 'call-5']);
        expect(calls.map((c) => parseCallId(c.callId)?.n)).toEqual([1, 2, 3, 4, 5]);
        expect(calls[1]?.kind).toBe('timer');
        expect(result.resources.toolCalls).toBe(5);
      },
    );

    escapeProgram(
      g,
      "the resources reported are the host's figures, not what a forged done message claims",
      {
        na: 'the quickjs worker (host code) measures the VM itself; the program has no way to report',
        python: `import json, os, select, time
big = bytearray(160 << 20)
for i in range(0, len(big), 4096):
    big[i] = 1
end = time.process_time()
x = 0
for i in range(3_000_000):
    x += i
os.write(3, (json.dumps({'t': 'done', 'ok': True, 'value': '"forged"', 'resources': {'memoryBytes': 1, 'cpuMs': 0}}) + '\\n').encode())
select.select([], [], [], 5)`,
      },
      async (src) => {
        const result = await g.run(src, { limits: { memoryBytes: 512 << 20 } });
        expect(expectSucceeded(result)).toBe('forged');
        expect(result.resources.memoryBytes).toBeGreaterThan(160 << 20);
        expect(result.resources.cpuMs ?? 0).toBeGreaterThan(50);
      },
    );

    // Python's runner is in the sandbox: the program can write the protocol's own call messages. An id that is
    // not the host's next one is a PROTOCOL_VIOLATION, whatever it is, and the tool never runs for it.
    const forged: Record<string, string> = {
      'a duplicate id': "tools.echo(i=1)\nsend('call-1')",
      'an id that skips ahead': "tools.echo(i=1)\nsend('call-3')",
      'an id before any call': "send('call-0')",
      'an id of another form': "send('s1.call-1')",
      'a number for an id': 'send(1)',
      'a scripted notice out of sequence': "tools.echo(i=1)\nsend('call-7', 'scripted')",
    };
    for (const [what, body] of Object.entries(forged)) {
      escapeProgram(
        g,
        `a call forged with ${what} is PROTOCOL_VIOLATION and runs nothing`,
        {
          na: 'a JavaScript guest has no protocol channel: the worker (host code) numbers its calls',
          python: `import json, os, select
def send(id, t='call'):
    os.write(3, (json.dumps({'t': t, 'id': id, 'ns': 'tools', 'name': 'echo', 'args': '{"forged":true}'}) + '\\n').encode())
    select.select([], [], [], 5)
${body}`,
        },
        async (src) => {
          const { result, calls } = await executeRecorded(g, src);
          expect(expectFailed(result, 'PROTOCOL_VIOLATION').message).toMatch(/id/);
          for (const call of calls) expect(call.kind === 'tool' && call.args).not.toEqual({ forged: true });
          await g.expectHealthy();
        },
      );
    }
  });
}
