// Intl through the durable layer (issue 19): formatting is a pure function of its inputs, the ICU data and the
// guest's clock, so nothing of it is journaled; a task that formats the time before and after a pause reads the
// same text on the replay, and a journal written on other ICU/CLDR/tz data is another engine (the task pauses).
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { JournalEntryInput } from '../../src/internal.ts';
import { journalAsDeadWorker, payTool, useDurableFixture } from './fixture.ts';

const PROGRAM = `const when = new Intl.DateTimeFormat('de-DE', { dateStyle: 'full', timeStyle: 'long', timeZone: 'Europe/Berlin' });
await new Promise((resolve) => setTimeout(resolve, 5));
const first = [when.format(), new Date().toLocaleString(), (1234567.891).toLocaleString('hi-IN'), ['b', 'a', 'ä'].sort(new Intl.Collator('sv').compare)];
await tools.record({ v: first });
const later = [new Date().toLocaleTimeString('ja-JP', { timeZone: 'Asia/Tokyo' }), new Intl.RelativeTimeFormat('fr').format(-2, 'day')];
await tools.pay({ v: later });
return { first, later };`;

describe('Intl replays exactly (quickjs)', () => {
  const fx = useDurableFixture('intl-determinism');

  function registry(recorded: unknown[], paid: unknown[]): ToolRegistry {
    const record = defineTool({
      name: 'record',
      description: 'records what the program formatted',
      effect: 'read',
      execute: (a) => {
        recorded.push((a as { v: unknown }).v);
        return null;
      },
    });
    return new ToolRegistry([record, payTool(paid)]);
  }

  it('text formatted before a pause is the same after resume (a changed text would be a REPLAY_DIVERGENCE)', async () => {
    const recorded: unknown[] = [];
    const paid: unknown[] = [];
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: registry(recorded, paid) });
    try {
      const t = await runtime.submit({ code: PROGRAM, seed: 7 });
      const paused = await runtime.run(t.task_id);
      expect(paused.pause_reason).toBe('approval_required');
      const approval = paused.pending_approvals[0];
      await runtime.decide(t.task_id, [{ approvalId: approval?.id ?? '', decision: 'approve' }]);
      const done = await runtime.run(t.task_id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const out = done.result?.output as { first: string[]; later: string[] };
      expect(recorded).toEqual([out.first]);
      expect(paid).toEqual([{ v: out.later }]);
      expect(out.first[0]).toMatch(/^\w+, \d+\. \w+ \d{4} um \d{2}:\d{2}:\d{2} MEZ|MESZ$/);
      expect(out.first[3]).toEqual(['a', 'b', 'ä']);
      expect(out.later[1]).toBe('il y a 2 jours');
    } finally {
      await runtime.close();
    }
  }, 30_000);

  it('a journal written on other ICU data pauses the task for a human (INCOMPATIBLE_CHECKPOINT)', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: registry([], []) });
    try {
      const t = await runtime.submit({ code: PROGRAM, seed: 7 });
      await runtime.run(t.task_id);
      const journal = await fx.store.readJournal(t.task_id);
      const manifest = journal.find((e) => e.type === 'manifest');
      const engine = (manifest?.data as { engine: string }).engine;
      expect(engine).toContain(`+icu-${process.versions.icu}+cldr-${process.versions.cldr}+tz-`);
      const older = journal.map((e) => {
        const entry = { type: e.type, data: e.data } as JournalEntryInput;
        return e.type === 'manifest'
          ? ({
              ...entry,
              data: { ...e.data, engine: engine.replace(/\+icu-[^+]+/, '+icu-1.0') },
            } as JournalEntryInput)
          : entry;
      });
      const other = await fx.store.createTask({
        kind: 'code',
        code: PROGRAM,
        language: 'javascript',
        seed: 7,
      });
      await journalAsDeadWorker(fx.store, other.id, older);
      const r = await runtime.run(other.id);
      expect(r.status).toBe('paused');
      expect(r.pause_reason).toBe('needs_attention');
      expect(r.error?.code).toBe('INCOMPATIBLE_CHECKPOINT');
      expect(r.error?.message).toContain('+icu-1.0');
    } finally {
      await runtime.close();
    }
  }, 30_000);
});
