import { expect } from 'vitest';
import { encodeOutcome, encodeValue } from '../../src/codec/index.ts';
import type {
  ExecutionHost,
  ExecutionLimits,
  ExecutionResult,
  HostCall,
  ReplayStep,
} from '../../src/spec/index.ts';
import { ToolRegistry } from '../../src/tools/index.ts';
import { echoTool } from './fixtures.ts';
import type { Group, Source, SuiteOptions } from './harness.ts';
import { DEFAULT_TEST_LIMITS, defineGroup, expectFailed, expectSucceeded } from './harness.ts';

// ExecutionRequest.replay: a driver with `supportsReplayScript` serves recorded outcomes itself, in script order.
// Call ids are the driver's own, so each case first records a run of its program and builds the script from it.

const START_CLOCK = 1_800_000_000_000;

/** What the host saw, in order: calls (by id), log lines and the end of the replay. */
interface Observed {
  readonly calls: HostCall[];
  readonly events: string[];
}

function observingHost(observed: Observed): ExecutionHost {
  const registry = new ToolRegistry([echoTool()]);
  const live = registry.host();
  return {
    call(call, signal) {
      observed.calls.push(call);
      observed.events.push(`call ${call.callId}`);
      return live.call(call, signal);
    },
    onLog: (entry) => observed.events.push(`log ${entry.message}`),
    onReplayDone: () => observed.events.push('replay done'),
  };
}

async function execute(
  g: Group,
  src: Source,
  replay: readonly ReplayStep[] | undefined,
  limits: Partial<ExecutionLimits> = {},
): Promise<{ result: ExecutionResult } & Observed> {
  const observed: Observed = { calls: [], events: [] };
  const result = await g.driver().execute({
    code: src.code,
    language: src.language,
    tools: new ToolRegistry([echoTool()]).bindings,
    host: observingHost(observed),
    limits: { ...DEFAULT_TEST_LIMITS, ...limits },
    seed: 7,
    clock: () => START_CLOCK,
    ...(replay ? { replay } : {}),
  });
  return { result, ...observed };
}

/** Runs the program against the live host and turns each call into a step (in the order issued). */
async function record(g: Group, src: Source): Promise<ReplayStep[]> {
  const { result, calls } = await execute(g, src, undefined);
  expectSucceeded(result);
  return calls.map((call, i) => {
    const tool = call.kind === 'timer' ? 'timer' : `${call.namespace}.${call.name}`;
    const args =
      call.kind === 'timer'
        ? String(call.delayMs)
        : (call.argsJson ?? encodeValue(call.args, { root: 'args' }));
    const value = call.kind === 'timer' ? null : { ...(call.args as object), from: 'script' };
    const { ok, payload } = encodeOutcome({ ok: true, value }, tool);
    return { callId: call.callId, tool, args, ok, payload, clock: START_CLOCK + 100 * (i + 1) };
  });
}

function at(steps: readonly ReplayStep[], i: number): ReplayStep {
  const step = steps[i];
  if (!step) throw new Error(`the recorded run made fewer than ${i + 1} calls`);
  return step;
}

export function registerReplayCases(options: SuiteOptions): void {
  defineGroup(
    options,
    'replay script',
    (g) => {
      g.program(
        'scripted outcomes are delivered in script order, without asking the host',
        {
          javascript: `const order = [];
await Promise.all([1, 2, 3].map((i) => tools.echo({ i }).then((v) => order.push(v.i + ':' + v.from))));
return order;`,
          python: `import asyncio

order = []
async def echo(i):
    v = await tools.echo_async(i=i)
    order.append(str(v['i']) + ':' + str(v.get('from')))
await asyncio.gather(*[echo(i) for i in (1, 2, 3)])
order`,
        },
        async (src) => {
          const steps = await record(g, src);
          const script = [at(steps, 2), at(steps, 0), at(steps, 1)];
          const { result, calls } = await execute(g, src, script);
          expect(expectSucceeded(result)).toEqual(['3:script', '1:script', '2:script']);
          expect(calls).toEqual([]);
          expect(result.resources.toolCalls).toBe(3);
        },
      );

      g.program(
        'without a return, the last expression statement is the result on replay too',
        {
          javascript: `const a = await tools.echo({ i: 1 });
const b = await tools.echo({ i: 2 });
({ sum: a.i + b.i, from: [a.from ?? 'host', b.from ?? 'host'], r: Math.random() })`,
          python: `import random

a = tools.echo(i=1)
b = tools.echo(i=2)
{'sum': a['i'] + b['i'], 'from': [a.get('from', 'host'), b.get('from', 'host')], 'r': random.random()}`,
        },
        async (src) => {
          const steps = await record(g, src);
          const live = expectSucceeded((await execute(g, src, undefined)).result) as { r: number };
          const first = await execute(g, src, steps);
          const second = await execute(g, src, steps);
          const replayed = expectSucceeded(first.result);
          expect(replayed).toEqual({ sum: 3, from: ['script', 'script'], r: live.r });
          expect(expectSucceeded(second.result)).toEqual(replayed);
          expect(first.calls).toEqual([]);
        },
      );

      g.program(
        'a call whose arguments differ from its step goes to the host, and its outcome comes after the script',
        {
          javascript: `const order = [];
await Promise.all([1, 2, 3].map((i) => tools.echo({ i }).then((v) => order.push(v.i + ':' + (v.from ?? 'host')))));
return order;`,
          python: `import asyncio

order = []
async def echo(i):
    v = await tools.echo_async(i=i)
    order.append(str(v['i']) + ':' + v.get('from', 'host'))
await asyncio.gather(*[echo(i) for i in (1, 2, 3)])
order`,
        },
        async (src) => {
          const steps = await record(g, src);
          const changed = { ...at(steps, 0), args: encodeValue({ i: 99 }) };
          const { result, calls } = await execute(g, src, [changed, at(steps, 2), at(steps, 1)]);
          expect(expectSucceeded(result)).toEqual(['3:script', '2:script', '1:host']);
          expect(calls.map((c) => c.callId)).toEqual([changed.callId]);
          expect(calls[0]?.kind === 'tool' && calls[0].args).toEqual({ i: 1 });
        },
      );

      g.program(
        'a host outcome that arrives while the script is being delivered waits for its end',
        {
          // Call 1 is not scripted and its answer comes at once; the scripted ones keep the guest busy meanwhile.
          javascript: `const order = [];
const live = tools.echo({ i: 0 }).then(() => order.push('host'));
for (let k = 1; k <= 3; k++) {
  await tools.echo({ i: k });
  order.push('script ' + k);
  let x = 0;
  for (let j = 0; j < 300000; j++) x += j;
}
await live;
return order;`,
          // gather starts live() first, so its call is the first issued, as in JavaScript.
          python: `import asyncio

order = []
async def live():
    await tools.echo_async(i=0)
    order.append('host')
async def scripted():
    for k in range(1, 4):
        await tools.echo_async(i=k)
        order.append('script ' + str(k))
        x = 0
        for j in range(300000):
            x += j
await asyncio.gather(live(), scripted())
order`,
        },
        async (src) => {
          const steps = await record(g, src);
          const { result, calls } = await execute(g, src, steps.slice(1));
          expect(expectSucceeded(result)).toEqual(['script 1', 'script 2', 'script 3', 'host']);
          expect(calls.map((c) => c.callId)).toEqual([at(steps, 0).callId]);
        },
      );

      g.program(
        "the guest clock moves to each scripted outcome's clock, timers included",
        {
          javascript: `const seen = [Date.now()];
await tools.echo({ i: 1 });
seen.push(Date.now());
await new Promise((resolve) => setTimeout(resolve, 10));
seen.push(Date.now());
return seen;`,
          python: `import time

now = lambda: time.time_ns() // 1_000_000
seen = [now()]
tools.echo(i=1)
seen.append(now())
time.sleep(0.01)
seen.append(now())
seen`,
        },
        async (src) => {
          const steps = await record(g, src);
          expect(at(steps, 1)).toMatchObject({ tool: 'timer', args: '10' });
          const script = [
            { ...at(steps, 0), clock: START_CLOCK + 250 },
            { ...at(steps, 1), clock: START_CLOCK + 900 },
          ];
          const { result, calls } = await execute(g, src, script);
          expect(expectSucceeded(result)).toEqual([START_CLOCK, START_CLOCK + 250, START_CLOCK + 900]);
          expect(calls).toEqual([]);
        },
      );

      g.program(
        'onReplayDone comes once, as the last scripted outcome is delivered: what follows is live',
        {
          javascript: `console.log('before');
await tools.echo({ i: 1 });
console.log('between');
await tools.echo({ i: 2 });
console.log('after');
const v = await tools.echo({ i: 3 });
console.log('live ' + (v.from ?? 'host'));
return v.i;`,
          python: `print('before')
tools.echo(i=1)
print('between')
tools.echo(i=2)
print('after')
v = tools.echo(i=3)
print('live ' + v.get('from', 'host'))
v['i']`,
        },
        async (src) => {
          const steps = await record(g, src);
          const { result, events } = await execute(g, src, steps.slice(0, 2));
          expect(expectSucceeded(result)).toBe(3);
          expect(events).toEqual([
            'log before',
            'log between',
            'replay done',
            'log after',
            `call ${at(steps, 2).callId}`,
            'log live host',
          ]);
        },
      );

      g.program(
        'an empty script is through before the program starts',
        {
          javascript: "console.log('hi');\nreturn (await tools.echo({ i: 1 })).i;",
          python: "print('hi')\ntools.echo(i=1)['i']",
        },
        async (src) => {
          const { result, events, calls } = await execute(g, src, []);
          expect(expectSucceeded(result)).toBe(1);
          expect(events[0]).toBe('replay done');
          expect(events.filter((e) => e === 'replay done')).toHaveLength(1);
          expect(calls).toHaveLength(1);
        },
      );

      g.program(
        'scripted calls count towards maxToolCalls like live ones',
        {
          javascript: 'for (let i = 0; i < 3; i++) await tools.echo({ i });\nreturn 1;',
          python: 'for i in range(3):\n    tools.echo(i=i)\n1',
        },
        async (src) => {
          const steps = await record(g, src);
          const { result, calls } = await execute(g, src, steps, { maxToolCalls: 2 });
          expectFailed(result, 'TOOL_CALL_LIMIT');
          expect(calls).toEqual([]);
        },
      );
    },
    {
      capable: (driver) => driver.supportsReplayScript === true,
      reason: 'the driver does not serve replay scripts (supportsReplayScript is not set)',
    },
  );
}
