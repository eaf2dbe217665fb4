import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';

// What submit() refuses: input the store or a replay could not keep as given.
// Each case was a bug (a review's finding, or one the state-machine property test found, as its minimal case):
// the comment says what is correct and what went wrong before the fix; the test asserts the correct behaviour.

describe('submit validation', () => {
  const fx = useDurableFixture('submit-validation');
  const rec = defineTool({ name: 'rec', description: 'records', effect: 'read', execute: () => 1 });

  // Correct: a seed that cannot be stored as given (NaN, Infinity) is refused by submit() with INVALID_ARGUMENT,
  // or the seed actually used is the one stored, so a replay is deterministic. Bug: the runtime's submit()
  // took any `seed`; the row stored NaN as null and every run's sandbox then picked its own seed, so the first
  // resume after a pause failed with REPLAY_DIVERGENCE (Math.random differs).
  it('a NaN seed is refused or replays deterministically (never REPLAY_DIVERGENCE)', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([rec]) });
    try {
      let t;
      try {
        t = await runtime.submit({
          code: "const a = Math.random(); await tools.rec({ a }); await input.wait('go'); return a;",
          seed: Number.NaN,
        });
      } catch (e) {
        expect(e).toMatchObject({ code: 'INVALID_ARGUMENT' });
        return;
      }
      await expect(runtime.run(t.task_id)).resolves.toMatchObject({ pause_reason: 'awaiting_input' });
      await runtime.provideInput(t.task_id, 'go', 1);
      const done = await runtime.run(t.task_id);
      expect(done.error?.code).not.toBe('REPLAY_DIVERGENCE'); // bug: REPLAY_DIVERGENCE
      expect(done.status).toBe('succeeded');
    } finally {
      await runtime.close();
    }
  });

  // Correct: metadata that is not JSON (a BigInt) is the caller's mistake: INVALID_ARGUMENT. Bug: it reached
  // JSON.stringify inside the SQLite store's createTask and surfaced as STORE_ERROR, a server-side failure code
  // (a 500 at the service).
  it('submit() with non-JSON metadata fails with INVALID_ARGUMENT, not STORE_ERROR', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([rec]) });
    try {
      await expect(runtime.submit({ code: 'return 1;', metadata: { n: 10n } })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      }); // bug: STORE_ERROR
    } finally {
      await runtime.close();
    }
  });
});
