import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJournaled } from '../../src/durable/index.ts';
import {
  createPythonDriver,
  createQuickJsDriver,
  defineTool,
  probePython,
  ToolRegistry,
} from '../../src/internal.ts';
import type { JournalEntryInput, SandboxDriver } from '../../src/internal.ts';

// Issue 17, item 3: one call's arguments and result are bounded on their encoded (journaled) form. Over the
// bound the call fails with a code the guest catches, the journal never holds the big value, and a replay of the
// journal delivers the same failure in the same place.

type Lang = 'javascript' | 'python';
const START = 1_800_000_000_000;
const MAX = 4096;
const BIG = 20_000;

function sizeTools(ran: string[]): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: 'take',
      description: 'takes anything',
      effect: 'unsafe',
      execute: (a) => {
        ran.push('take');
        return JSON.stringify(a).length;
      },
    }),
    defineTool({
      name: 'give',
      description: 'returns n characters',
      effect: 'unsafe',
      execute: (a) => {
        ran.push('give');
        return 'y'.repeat((a as { n: number }).n);
      },
    }),
  ]);
}

const PROGRAMS: Record<Lang, string> = {
  javascript: `
const out = [];
try { await tools.take({ s: 'x'.repeat(${BIG}) }); out.push('took'); } catch (e) { out.push(e.name + ':' + e.code); }
try { await tools.give({ n: ${BIG} }); out.push('gave'); } catch (e) { out.push(e.name + ':' + e.code); }
out.push(String((await tools.give({ n: 3 })).length));
return out;`,
  python: `
out = []
try:
    tools.take(s='x' * ${BIG})
    out.append('took')
except ToolError as e:
    out.append('ToolError:' + e.code)
try:
    tools.give(n=${BIG})
    out.append('gave')
except ToolError as e:
    out.append('ToolError:' + e.code)
out.append(str(len(tools.give(n=3))))
out`,
};

async function run(driver: SandboxDriver, language: Lang, recorded: JournalEntryInput[]) {
  const ran: string[] = [];
  const tools = sizeTools(ran);
  const journal: JournalEntryInput[] = [];
  const result = await runJournaled({
    driver,
    request: {
      code: PROGRAMS[language],
      language,
      tools: tools.bindings,
      seed: 1,
      limits: { timeoutMs: 10_000 },
    },
    live: tools.host(),
    policy: { effectOf: () => 'unsafe' },
    journal: {
      recorded,
      append: (entries) => {
        journal.push(...entries);
        return Promise.resolve();
      },
    },
    sizes: { maxToolArgumentBytes: MAX, maxToolResultBytes: MAX },
    startClock: START,
    clock: () => START,
  });
  return { result, journal, ran };
}

const EXPECTED = ['ToolError:TOOL_ARGUMENTS_TOO_LARGE', 'ToolError:TOOL_RESULT_TOO_LARGE', '3'];

const python = await probePython();
for (const language of ['javascript', 'python'] as const) {
  const describeIf = language === 'python' && !python.ok ? describe.skip : describe;
  if (language === 'python' && !python.ok)
    console.warn(`[tool-size-limits] python skipped: ${python.reason}`);
  describeIf(`tool call size bounds (${language})`, () => {
    let driver: SandboxDriver;
    beforeAll(() => {
      driver =
        language === 'javascript' ? createQuickJsDriver({ workers: 1 }) : createPythonDriver({ warm: 1 });
    });
    afterAll(() => driver.close());

    it('fails oversize arguments and results with catchable codes, journaling neither value', async () => {
      const first = await run(driver, language, []);
      expect(first.result.status, JSON.stringify(first.result)).toBe('succeeded');
      if (first.result.status !== 'succeeded') return;
      expect(first.result.value).toEqual(EXPECTED);
      // The oversize call never ran; the tool that returned too much did.
      expect(first.ran).toEqual(['give', 'give']);
      const text = JSON.stringify(first.journal);
      expect(text.length).toBeLessThan(BIG);
      expect(text).not.toContain('x'.repeat(100));
      expect(text).not.toContain('y'.repeat(100));
      const outcomes = first.journal.filter((e) => e.type === 'tool_outcome');
      expect(outcomes.map((e) => (e.data as { ok: boolean }).ok)).toEqual([false, false, true]);

      // A replay of the whole journal: the same failures, in the same places, and no tool runs again.
      const replay = await run(driver, language, first.journal);
      expect(replay.result.status, JSON.stringify(replay.result)).toBe('succeeded');
      if (replay.result.status !== 'succeeded') return;
      expect(replay.result.value).toEqual(EXPECTED);
      expect(replay.ran).toEqual([]);
      expect(replay.journal).toEqual([]);

      // A resume after a crash that lost the refused call's outcome: it is refused again, never run.
      const cut = first.journal.findIndex((e) => e.type === 'tool_outcome');
      const resumed = await run(driver, language, first.journal.slice(0, cut));
      expect(resumed.result.status).toBe('succeeded');
      if (resumed.result.status !== 'succeeded') return;
      expect(resumed.result.value).toEqual(EXPECTED);
      expect(resumed.ran).toEqual(['give', 'give']);
    });
  });
}
