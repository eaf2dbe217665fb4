import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJournaled, TaskRunner } from '../../src/durable/index.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';
import {
  createPythonDriver,
  createQuickJsDriver,
  defineTool,
  probePython,
  ToolRegistry,
} from '../../src/internal.ts';
import type { ExecutionResult, JournalEntryInput, SandboxDriver } from '../../src/internal.ts';

// Issue 15, class 1: a replay cannot skip the journal. A program that, on replay, takes another branch and
// ends (returns or throws) before asking again for a call its journal holds must not succeed: the call
// happened, and a result that does not know of it is not the task's. Each case records a real run of one
// program, then replays the journal with a program that takes another branch (what a clock, a file or any
// source the journal does not hold would make it do), through the real drivers.

type Lang = 'javascript' | 'python';

interface Variant {
  /** The run that writes the journal. */
  readonly recorded: string;
  /** The program that replays it and takes another branch. */
  readonly replayed: string;
}

function payTools(paid: unknown[]): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: 'pay',
      description: 'pays (unsafe)',
      effect: 'unsafe',
      execute: (a) => {
        paid.push(a);
        return 'paid';
      },
    }),
    defineTool({
      name: 'look',
      description: 'reads',
      effect: 'read',
      execute: (a) => a,
    }),
  ]);
}

const START = 1_800_000_000_000;

async function runOnce(driver: SandboxDriver, language: Lang, code: string, recorded: JournalEntryInput[]) {
  const paid: unknown[] = [];
  const tools = payTools(paid);
  const journal: JournalEntryInput[] = [];
  const result = await runJournaled({
    driver,
    request: { code, language, tools: tools.bindings, seed: 3, limits: { timeoutMs: 10_000 } },
    live: tools.host(),
    policy: {
      effectOf: (call) =>
        call.kind === 'timer' ? 'read' : (tools.get(call.namespace, call.name)?.effect ?? 'unsafe'),
    },
    journal: {
      recorded,
      append: (entries) => {
        journal.push(...entries);
        return Promise.resolve();
      },
      keyPrefix: 'task-1:0',
    },
    startClock: START,
    clock: () => START,
  });
  return { result, journal, paid };
}

function divergence(result: ExecutionResult): Record<string, unknown> {
  if (result.status !== 'failed')
    throw new Error(`expected REPLAY_DIVERGENCE, the run succeeded with ${JSON.stringify(result.value)}`);
  expect(result.error.code, result.error.message).toBe('REPLAY_DIVERGENCE');
  return result.error.details ?? {};
}

const CASES: Record<string, Record<Lang, Variant> & { first: string; ended: string }> = {
  'returns before a journaled payment': {
    first: 'call-2',
    ended: 'succeeded',
    javascript: {
      recorded: "await tools.look({ q: 1 });\nawait tools.pay({ amount: 100 });\nreturn 'done';",
      replayed: "await tools.look({ q: 1 });\nreturn 'skipped the payment';",
    },
    python: {
      recorded: "tools.look(q=1)\ntools.pay(amount=100)\n'done'",
      replayed: "tools.look(q=1)\n'skipped the payment'",
    },
  },
  'throws before a journaled payment': {
    first: 'call-2',
    ended: 'failed',
    javascript: {
      recorded: "await tools.look({ q: 1 });\nawait tools.pay({ amount: 100 });\nreturn 'done';",
      replayed: "await tools.look({ q: 1 });\nthrow new Error('another branch');",
    },
    python: {
      recorded: "tools.look(q=1)\ntools.pay(amount=100)\n'done'",
      replayed: "tools.look(q=1)\nraise RuntimeError('another branch')",
    },
  },
  'asks for two of the three calls of a Promise.all': {
    first: 'call-3',
    ended: 'succeeded',
    javascript: {
      recorded:
        'return await Promise.all([tools.look({ q: 1 }), tools.look({ q: 2 }), tools.pay({ amount: 3 })]);',
      replayed: 'return await Promise.all([tools.look({ q: 1 }), tools.look({ q: 2 })]);',
    },
    python: {
      recorded:
        'import asyncio\nawait asyncio.gather(tools.look_async(q=1), tools.look_async(q=2), tools.pay_async(amount=3))',
      replayed: 'import asyncio\nawait asyncio.gather(tools.look_async(q=1), tools.look_async(q=2))',
    },
  },
  'skips a journaled timer and a payment after it': {
    first: 'call-1',
    ended: 'succeeded',
    javascript: {
      recorded:
        "await new Promise((r) => setTimeout(r, 5));\nawait tools.pay({ amount: 1 });\nreturn 'done';",
      replayed: "return 'no wait';",
    },
    python: {
      recorded: "import time\ntime.sleep(0.005)\ntools.pay(amount=1)\n'done'",
      replayed: "'no wait'",
    },
  },
  'returns at once, before every journaled call': {
    first: 'call-1',
    ended: 'succeeded',
    javascript: {
      recorded: "await tools.pay({ amount: 7 });\nreturn 'done';",
      replayed: 'return 0;',
    },
    python: { recorded: "tools.pay(amount=7)\n'done'", replayed: '0' },
  },
};

const python = await probePython();

for (const language of ['javascript', 'python'] as const) {
  const describeIf = language === 'python' && !python.ok ? describe.skip : describe;
  if (language === 'python' && !python.ok)
    console.warn(`[replay-completeness] python skipped: ${python.reason}`);
  describeIf(`a replay cannot skip the journal (${language})`, () => {
    let driver: SandboxDriver;
    beforeAll(async () => {
      driver =
        language === 'javascript' ? createQuickJsDriver({ workers: 1 }) : createPythonDriver({ warm: 1 });
      await driver.ready();
    });
    afterAll(() => driver.close());

    for (const [name, c] of Object.entries(CASES)) {
      it(`${name}: REPLAY_DIVERGENCE names ${c.first}, never success, and nothing runs again`, async () => {
        const { recorded, replayed } = c[language];
        const first = await runOnce(driver, language, recorded, []);
        expect(first.result.status, JSON.stringify(first.result)).toBe('succeeded');
        expect(first.paid.length).toBeGreaterThan(0);
        const again = await runOnce(driver, language, replayed, first.journal);
        const details = divergence(again.result);
        expect(details.call_id).toBe(c.first);
        expect((details.ended as { status: string }).status).toBe(c.ended);
        expect(again.result.status === 'failed' && again.result.error.message).toMatch(
          new RegExp(`^${c.first}: the journal has `),
        );
        // The replay journals nothing and pays nothing: the skipped call is reported, not repeated.
        expect(again.paid).toEqual([]);
        expect(again.journal.filter((e) => e.type === 'tool_intent')).toEqual([]);
      });
    }

    it('the same program replays its whole journal and succeeds (the check has no false alarm)', async () => {
      const { recorded } = CASES['asks for two of the three calls of a Promise.all']![language];
      const first = await runOnce(driver, language, recorded, []);
      const again = await runOnce(driver, language, recorded, first.journal);
      expect(again.result.status, JSON.stringify(again.result)).toBe('succeeded');
      expect(again.result.status === 'succeeded' && again.result.value).toEqual(
        first.result.status === 'succeeded' && first.result.value,
      );
      expect(again.paid).toEqual([]);
    });

    it('an end the host decided (a timeout) keeps its own code: the calls may not have come yet', async () => {
      const { recorded } = CASES['returns before a journaled payment']![language];
      const first = await runOnce(driver, language, recorded, []);
      const stuck = language === 'javascript' ? 'while (true) {}' : 'while True:\n    pass';
      const paid: unknown[] = [];
      const tools = payTools(paid);
      const result = await runJournaled({
        driver,
        request: { code: stuck, language, tools: tools.bindings, seed: 3, limits: { timeoutMs: 300 } },
        live: tools.host(),
        policy: { effectOf: () => 'unsafe' },
        journal: { recorded: first.journal, append: () => Promise.resolve() },
        startClock: START,
      });
      expect(result.status === 'failed' && result.error.code).toBe('TIMEOUT');
    });
  });
}

describe('a recovered task whose program skips its journal fails, never succeeds (TaskRunner, SQLite)', () => {
  const fx = useDurableFixture('replay-completeness');

  it('the journal holds a payment the program no longer makes: REPLAY_DIVERGENCE, and nothing is paid', async () => {
    const paid: unknown[] = [];
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools: payTools(paid), owner: 'B' });
    const t = await fx.store.createTask({
      kind: 'code',
      code: "const n = await tools.look({ q: 1 });\nreturn 'done without paying';",
      language: 'javascript',
      seed: 1,
    });
    // A worker ran an earlier branch of the program and died: its journal has the look and a payment.
    await journalAsDeadWorker(fx.store, t.id, [
      { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.look', args: '{"q":1}' } },
      { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '{"q":1}', clock: START } },
      { type: 'tool_intent', data: { call_id: 'call-2', tool: 'tools.pay', args: '{"amount":100}' } },
      { type: 'tool_outcome', data: { call_id: 'call-2', ok: true, payload: '"paid"', clock: START } },
    ]);
    const after = await runner.runTask(t.id);
    expect(after).toMatchObject({ status: 'failed', error: { code: 'REPLAY_DIVERGENCE' } });
    expect(paid).toEqual([]);
  });
});
