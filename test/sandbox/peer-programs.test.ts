// Issue 19: programs from peers' own test suites (smolagents, Cloudflare's and Vercel's code modes), and forms
// models write, through codecall's sandboxes, as `codecall exec` runs them (runProgram), each checked against what its test expects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonView } from '../../src/codec/index.ts';
import { createPythonDriver, createQuickJsDriver, probePython, runProgram } from '../../src/internal.ts';
import type { ExecutionResult, PythonDriver, QuickJsDriver } from '../../src/internal.ts';
import { codeModeCases } from './peer-programs/code-mode.ts';
import { modelHabitCases } from './peer-programs/model-habits.ts';
import type { PeerCase } from './peer-programs/peer-case.ts';
import { peerTools } from './peer-programs/peer-tools.ts';
import { smolagentsCases } from './peer-programs/smolagents.ts';

const probe = await probePython();
const cases = [...smolagentsCases, ...codeModeCases, ...modelHabitCases].filter(
  (c) => c.language !== 'python' || probe.ok,
);

/** Why a result is not what the peer's test expects; null when it is. */
function mismatch(c: PeerCase, r: ExecutionResult): string | null {
  if ('value' in c.expect) {
    if (r.status !== 'succeeded') return `failed: ${r.error.code} ${r.error.name ?? ''}: ${r.error.message}`;
    const got = toJsonView(r.value);
    const { warns } = c.expect;
    if (warns && !r.logs.some((l) => l.level === 'warn' && l.message.includes(warns)))
      return `no warning naming ${warns}`;
    try {
      expect(got).toEqual(c.expect.value);
      return null;
    } catch {
      return `wrong value: ${JSON.stringify(got)} (expected ${JSON.stringify(c.expect.value)})`;
    }
  }
  if (r.status !== 'failed') return `succeeded with ${JSON.stringify(toJsonView(r.value))}`;
  const want = c.expect.error;
  const { code, name, message } = r.error;
  const text = `${code} ${name ?? ''}: ${message}`;
  if (want.code && want.code !== code) return `wrong error: ${text}`;
  if (want.name && want.name !== name) return `wrong error: ${text}`;
  const matches =
    typeof want.message === 'string' ? message.includes(want.message) : want.message.test(message);
  return matches ? null : `wrong error: ${text}`;
}

describe('programs from peers’ test suites', () => {
  let quickjs: QuickJsDriver;
  let python: PythonDriver | undefined;
  const outcomes = new Map<PeerCase, string | null>();

  beforeAll(async () => {
    quickjs = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 2 });
    await quickjs.ready();
    if (probe.ok) {
      python = createPythonDriver({ warm: 2 });
      await python.ready();
    }
    // Run everything up front, a few at a time, so the per-case tests only check.
    const queue = cases.filter((c) => !c.gap);
    const worker = async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        const driver = c.language === 'python' ? python : quickjs;
        if (!driver) continue;
        const r = await runProgram({
          driver,
          code: c.code,
          language: c.language,
          tools: peerTools,
          limits: { timeoutMs: 3_000 },
        });
        outcomes.set(c, mismatch(c, r));
      }
    };
    await Promise.all([worker(), worker()]);
  }, 300_000);

  afterAll(async () => {
    const bySource = new Map<string, { pass: number; all: number }>();
    for (const c of cases) {
      const s = bySource.get(c.source) ?? { pass: 0, all: 0 };
      s.all += 1;
      if (!c.gap && outcomes.get(c) === null) s.pass += 1;
      bySource.set(c.source, s);
    }
    const lines = [...bySource].map(
      ([source, s]) => `  ${source}: ${s.pass}/${s.all} (${((100 * s.pass) / s.all).toFixed(0)}%)`,
    );
    const failing = cases.filter((c) => !c.gap && outcomes.get(c) !== null);
    for (const c of failing) console.log(`FAIL ${c.language} ${c.name}: ${outcomes.get(c) ?? 'not run'}`);
    const pass = [...bySource.values()].reduce((n, s) => n + s.pass, 0);
    console.log(
      `peer programs: ${pass}/${cases.length} pass (${((100 * pass) / cases.length).toFixed(1)}%)\n${lines.join('\n')}`,
    );
    await quickjs.close();
    await python?.close();
  });

  for (const c of cases) {
    const title = `${c.language} ${c.name} (${c.source})`;
    if (c.gap) it.skip(`${title}: known gap, ${c.gap}`, () => {});
    else it(title, () => expect(outcomes.get(c)).toBeNull());
  }
});
