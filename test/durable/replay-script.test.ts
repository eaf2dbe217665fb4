import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJournaled } from '../../src/durable/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/index.ts';
import type {
  ExecutionRequest,
  GuestLanguage,
  JournalEntryInput,
  ReplayStep,
  SandboxDriver,
} from '../../src/index.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';

// The durable layer hands a driver that can serve recorded outcomes itself the journal as a replay script; the
// host then sees only the calls the journal has no outcome for. Without the capability it serves them itself.

const JS_PROGRAM = `
const order = [];
const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(async (id, i) => {
  const v = await tools.work({ id, ms: [40, 5, 20][i] });
  order.push(id);
  return v;
}));
const d = await tools.work({ id: 'd', ms: 1 });
console.log('done', Date.now());
return { a, b, c, d, order, r: Math.random(), t: Date.now() };
`;

const PY_PROGRAM = `import asyncio, random, time

order = []
async def one(id, ms):
    v = await tools.work_async(id=id, ms=ms)
    order.append(id)
    return v
a, b, c = await asyncio.gather(*[one(id, ms) for id, ms in (('a', 40), ('b', 5), ('c', 20))])
d = tools.work(id='d', ms=1)
print('done', time.time_ns() // 1_000_000)
{'a': a, 'b': b, 'c': c, 'd': d, 'order': order, 'r': random.random(), 't': time.time_ns() // 1_000_000}
`;

// A loop timer racing a slow tool: the journal says the timer won, and a replay must agree.
const JS_RACE = `const winner = await Promise.race([
  tools.work({ id: 'slow', ms: 400 }).then(() => 'tool'),
  new Promise((r) => setTimeout(() => r('timer'), 30)),
]);
return { winner, t: Date.now() };`;
const PY_RACE = `import asyncio, time

async def race():
    try:
        await asyncio.wait_for(tools.work_async(id='slow', ms=400), 0.03)
        return 'tool'
    except asyncio.TimeoutError:
        return 'timer'
{'winner': await race(), 't': time.time_ns() // 1_000_000}`;

const python = await probePython();
const DRIVERS: {
  name: string;
  language: GuestLanguage;
  program: string;
  race: string;
  make: () => SandboxDriver;
  skip?: string;
}[] = [
  {
    name: 'quickjs',
    language: 'javascript',
    program: JS_PROGRAM,
    race: JS_RACE,
    make: () => createQuickJsDriver({ workers: 1 }),
  },
  {
    name: 'python',
    language: 'python',
    program: PY_PROGRAM,
    race: PY_RACE,
    make: () => createPythonDriver({ warm: 1, probe: python }),
    ...(python.ok ? {} : { skip: python.reason }),
  },
];

interface Seen {
  replay: readonly ReplayStep[] | undefined;
  hostCalls: string[];
  replayDone: number;
}

/** The real driver, with what the durable layer asked of it recorded. */
function observing(driver: SandboxDriver, supportsReplayScript: boolean, seen: Seen[]): SandboxDriver {
  return {
    name: driver.name,
    apiVersion: driver.apiVersion,
    engine: driver.engine,
    languages: driver.languages,
    supportsReplayScript,
    ready: () => driver.ready(),
    close: () => Promise.resolve(),
    execute(request: ExecutionRequest, options) {
      const s: Seen = { replay: request.replay, hostCalls: [], replayDone: 0 };
      seen.push(s);
      const host = request.host;
      return driver.execute(
        {
          ...request,
          host: {
            call: (call, signal) => {
              s.hostCalls.push(call.callId);
              return host.call(call, signal);
            },
            ...(host.onLog ? { onLog: host.onLog.bind(host) } : {}),
            onReplayDone: () => {
              s.replayDone += 1;
              host.onReplayDone?.();
            },
          },
        },
        options,
      );
    },
  };
}

describe.each(DRIVERS)(
  'replay through a driver-side script ($name)',
  ({ language, program, race, make, skip }) => {
    if (skip !== undefined) {
      // Only the python driver can be missing (no bubblewrap or no /usr/bin/python3): say so, and why.
      console.warn(`[replay-script] ${language} skipped: ${skip}`);
      it.skip(`${language} driver unavailable here [${skip}]`, () => undefined);
      return;
    }
    let driver: SandboxDriver;
    beforeAll(async () => {
      driver = make();
      await driver.ready();
    });
    afterAll(() => driver.close());

    const runs: string[] = [];
    const registry = new ToolRegistry([
      defineTool({
        name: 'work',
        description: 'sleeps, then echoes',
        effect: 'read',
        async execute(args) {
          const { id, ms } = args as { id: string; ms: number };
          runs.push(id);
          await new Promise((r) => setTimeout(r, ms));
          return `${id}-done`;
        },
      }),
    ]);
    let clockNow = 1_700_000_000_000;

    async function run(d: SandboxDriver, recorded: readonly JournalEntryInput[], code = program) {
      const journal: JournalEntryInput[] = [];
      const streamed: string[] = [];
      runs.length = 0;
      const result = await runJournaled({
        driver: d,
        request: { code, language, tools: registry.bindings, seed: 3 },
        live: registry.host({ onLog: (e) => streamed.push(e.message) }),
        policy: { effectOf: () => 'read' },
        journal: {
          recorded,
          append: (entries) => {
            journal.push(...entries);
            return Promise.resolve();
          },
        },
        startClock: 1_700_000_000_000,
        clock: () => (clockNow += 11),
      });
      if (result.status !== 'succeeded') throw new Error(`${result.error.code}: ${result.error.message}`);
      return { value: result.value, journal, streamed, ran: [...runs] };
    }

    it('passes the journaled outcomes in delivery order; the host sees only the calls past the journal', async () => {
      const seen: Seen[] = [];
      const capable = observing(driver, true, seen);
      const original = await run(capable, []);
      expect(seen[0]?.replay).toBeUndefined();
      // The journal as it stood when the process died: the three intents and the first two outcomes (b, c).
      const crashed = [
        ...original.journal.filter((e) => e.type === 'tool_intent').slice(0, 3),
        ...original.journal.filter((e) => e.type === 'tool_outcome').slice(0, 2),
      ];
      const resumed = await run(capable, crashed);
      expect(seen[1]?.replay?.map((s) => s.callId)).toEqual(['call-2', 'call-3']);
      expect(seen[1]?.replay?.[0]).toMatchObject({ tool: 'tools.work', ok: true });
      expect(JSON.parse(seen[1]?.replay?.[0]?.args ?? '')).toEqual({ id: 'b', ms: 5 });
      expect(seen[1]?.hostCalls).toEqual(['call-1', 'call-4']);
      expect(seen[1]?.replayDone).toBe(1);
      expect(resumed.ran).toEqual(['a', 'd']);
      const { t: _t, ...rest } = resumed.value as Record<string, unknown>;
      const { t: _t0, ...originalRest } = original.value as Record<string, unknown>;
      expect(rest).toEqual(originalRest);
      expect(rest.order).toEqual(['b', 'c', 'a']);
    });

    it('replays a whole journal the same with and without the script, streaming only what is new', async () => {
      const seen: Seen[] = [];
      const original = await run(observing(driver, true, seen), []);
      const scripted = await run(observing(driver, true, seen), original.journal);
      const hosted = await run(observing(driver, false, seen), original.journal);
      expect(seen[1]?.replay).toHaveLength(4);
      expect(seen[1]?.hostCalls).toEqual([]);
      expect(seen[2]?.replay).toBeUndefined();
      expect(seen[2]?.hostCalls).toEqual(['call-1', 'call-2', 'call-3', 'call-4']);
      for (const replay of [scripted, hosted]) {
        expect(replay.value).toEqual(original.value);
        expect(replay.journal).toEqual([]);
        expect(replay.ran).toEqual([]);
        // The last line is printed after the last journaled outcome: live, so streamed again.
        expect(replay.streamed).toEqual(original.streamed);
      }
    });

    it('a timer that won a race against a tool wins it again on replay, with and without the script', async () => {
      const seen: Seen[] = [];
      const original = await run(observing(driver, true, seen), [], race);
      expect(original.value).toMatchObject({ winner: 'timer' });
      const scripted = await run(observing(driver, true, seen), original.journal, race);
      const hosted = await run(observing(driver, false, seen), original.journal, race);
      for (const replay of [scripted, hosted]) {
        expect(replay.value).toEqual(original.value);
        expect(replay.ran).toEqual([]);
      }
    });
  },
);
