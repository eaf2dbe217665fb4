import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJournaled } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type {
  ExecutionResult,
  HostCall,
  JournalEntryInput,
  QuickJsDriver,
  ToolEffect,
} from '../../src/internal.ts';

// Replay through the real quickjs driver: a journal recorded by one run drives the next exactly.

const PROGRAM = `
const started = Date.now();
console.log('start');
const rolls = [Math.random(), Math.random()];
const [a, b, c] = await Promise.all([
  tools.work({ id: 'a', ms: 60 }),
  tools.work({ id: 'b', ms: 10 }),
  tools.work({ id: 'c', ms: 35 }),
]);
const order = [];
await Promise.all(['x', 'y', 'z'].map(async (k) => { await tools.work({ id: k, ms: k === 'y' ? 5 : 25 }); order.push(k); }));
console.log('seen', Date.now() - started);
return { a, b, c, order, rolls, elapsed: Date.now() - started };
`;

interface Harness {
  runs: string[];
  registry: ToolRegistry;
}

function harness(effect: ToolEffect = 'read'): Harness {
  const runs: string[] = [];
  const work = defineTool({
    name: 'work',
    description: 'sleeps, then echoes',
    input: {
      type: 'object',
      properties: { id: { type: 'string' }, ms: { type: 'number' } },
      required: ['id', 'ms'],
    },
    effect,
    async execute(args) {
      const { id, ms } = args as { id: string; ms: number };
      runs.push(id);
      await new Promise((r) => setTimeout(r, ms));
      return `${id}-done`;
    },
  });
  return { runs, registry: new ToolRegistry([work]) };
}

describe('journaled execution and replay (quickjs)', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 2 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  let clockNow = 1_700_000_000_000;
  const clock = (): number => (clockNow += 7);

  async function run(h: Harness, recorded: readonly JournalEntryInput[], code = PROGRAM) {
    const journal: JournalEntryInput[] = [];
    const streamed: string[] = [];
    const result = await runJournaled({
      driver,
      request: { code, language: 'javascript', tools: h.registry.bindings, seed: 42 },
      live: h.registry.host({ onLog: (e) => streamed.push(e.message) }),
      policy: {
        effectOf: (call: HostCall) =>
          call.kind === 'timer' ? 'read' : (h.registry.get(call.namespace, call.name)?.effect ?? 'unsafe'),
      },
      journal: {
        recorded,
        append: (entries) => {
          journal.push(...entries);
          return Promise.resolve();
        },
      },
      startClock: 1_700_000_000_000,
      clock,
    });
    return { result, journal, streamed };
  }

  function value(result: ExecutionResult): unknown {
    if (result.status !== 'succeeded')
      throw new Error(`failed: ${result.error.code} ${result.error.message}`);
    return result.value;
  }

  /** After a crash, time moved on for the calls that ran again: everything but the clock must match. */
  function timeless(result: ExecutionResult): unknown {
    const { elapsed: _elapsed, ...rest } = value(result) as Record<string, unknown>;
    return rest;
  }

  // An idempotent tool: its intent is committed before it runs (a read's goes with its outcome, ADR 0047 amended
  // 2026-12-07; test/durable/read-one-append.test.ts).
  it('records intents before outcomes and replays a whole journal without running a tool', async () => {
    const first = harness('idempotent');
    const original = await run(first, []);
    expect(first.runs.sort()).toEqual(['a', 'b', 'c', 'x', 'y', 'z']);
    expect(original.journal.filter((e) => e.type === 'tool_intent')).toHaveLength(6);
    expect(original.journal.filter((e) => e.type === 'tool_outcome')).toHaveLength(6);
    // Outcomes were delivered in completion order: b (10 ms) before c (35 ms) before a (60 ms).
    const outcomeOrder = original.journal.filter((e) => e.type === 'tool_outcome').map((e) => e.data.call_id);
    expect(outcomeOrder.slice(0, 3)).toEqual(['call-2', 'call-3', 'call-1']);

    const second = harness('idempotent');
    const replay = await run(second, original.journal);
    expect(second.runs).toEqual([]);
    expect(replay.journal).toEqual([]);
    expect(value(replay.result)).toEqual(value(original.result));
    expect(replay.result.logs).toEqual(original.result.logs);
    // Lines printed before the last journaled outcome are not streamed again by the replay.
    expect(original.streamed).toEqual(['start', 'seen 42']);
    expect(replay.streamed).toEqual(['seen 42']);
  });

  it('replays Promise.all exactly after a crash with two of three outcomes journaled', async () => {
    const first = harness('idempotent');
    const original = await run(first, []);
    // The journal as it stood when the process died: 3 intents, the first 2 outcomes.
    const intents = original.journal.filter((e) => e.type === 'tool_intent').slice(0, 3);
    const outcomes = original.journal.filter((e) => e.type === 'tool_outcome').slice(0, 2);
    const second = harness('idempotent');
    const resumed = await run(second, [...intents, ...outcomes]);
    expect(second.runs).toEqual(['a', 'x', 'y', 'z']); // only the call in flight (a) and those after it
    expect(timeless(resumed.result)).toEqual(timeless(original.result));
    expect(resumed.journal.filter((e) => e.type === 'tool_intent').map((e) => e.data.call_id)).toEqual([
      'call-4',
      'call-5',
      'call-6',
    ]);
  });

  it('fails with REPLAY_DIVERGENCE naming the first differing call', async () => {
    const original = await run(harness(), []);
    const changed = PROGRAM.replace("tools.work({ id: 'b', ms: 10 })", "tools.work({ id: 'B', ms: 10 })");
    const second = harness();
    const { result } = await run(second, original.journal, changed);
    expect(result.status).toBe('failed');
    if (result.status === 'failed') {
      expect(result.error.code).toBe('REPLAY_DIVERGENCE');
      expect(result.error.message).toContain('call-2');
      expect(result.error.message).toContain('"B"');
    }
    expect(second.runs).toEqual([]);
  });

  it('stops with NEEDS_ATTENTION instead of repeating an unsafe call whose outcome was lost', async () => {
    const first = harness('unsafe');
    const original = await run(first, []);
    const intents = original.journal.filter((e) => e.type === 'tool_intent').slice(0, 3);
    const outcomes = original.journal.filter((e) => e.type === 'tool_outcome').slice(0, 2);
    const second = harness('unsafe');
    const { result } = await run(second, [...intents, ...outcomes]);
    expect(result.status === 'failed' && result.error.code).toBe('NEEDS_ATTENTION');
    expect(second.runs).toEqual([]);
  });

  it('re-runs a lost call of a read tool and keeps going live', async () => {
    const first = harness('read');
    const original = await run(first, []);
    const intents = original.journal.filter((e) => e.type === 'tool_intent').slice(0, 3);
    const second = harness('read');
    const { result, journal } = await run(second, intents);
    expect(timeless(result)).toEqual(timeless(original.result));
    expect(second.runs.sort()).toEqual(['a', 'b', 'c', 'x', 'y', 'z']);
    // The three re-run calls journal only their outcomes (their intents are already there).
    expect(journal.filter((e) => e.type === 'tool_intent')).toHaveLength(3);
    expect(journal.filter((e) => e.type === 'tool_outcome')).toHaveLength(6);
  });
});
