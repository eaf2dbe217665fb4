// Issue 19 through the durable layer: crypto.randomUUID() and crypto.getRandomValues() come from the execution's
// seed, and setInterval's rounds are host calls like setTimeout's. A task reads them, hands what it read to a tool,
// and is paused for an approval and resumed (the resumed run replays the journal in a new VM) or recovered after
// its worker died (another runtime replays what the dead one journaled). A value that read differently on the
// replay would change a tool's arguments: REPLAY_DIVERGENCE, never success.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { JournalEntryInput } from '../../src/internal.ts';
import { journalAsDeadWorker, payTool, useDurableFixture } from './fixture.ts';

const PROGRAM = `const id = crypto.randomUUID();
const bytes = Array.from(crypto.getRandomValues(new Uint8Array(8)));
await tools.record({ v: [id, bytes] });
let ticks = 0;
await new Promise((resolve) => {
  const h = setInterval(() => { if (++ticks === 3) { clearInterval(h); resolve(); } }, 5);
});
const later = crypto.randomUUID();
await tools.pay({ v: later });
return { id, bytes, later, after: crypto.randomUUID(), ticks, random: Math.random() };`;

interface Output {
  id: string;
  bytes: number[];
  later: string;
  after: string;
  ticks: number;
  random: number;
}

describe('crypto and setInterval replay exactly (quickjs)', () => {
  const fx = useDurableFixture('web-determinism');
  const recorded: unknown[] = [];
  const paid: unknown[] = [];
  let tools: ToolRegistry;
  beforeAll(() => {
    const record = defineTool({
      name: 'record',
      description: 'records what the program read',
      effect: 'read',
      execute: (a) => {
        recorded.push((a as { v: unknown }).v);
        return null;
      },
    });
    tools = new ToolRegistry([record, payTool(paid)]);
  });
  afterAll(() => {
    recorded.length = 0;
  });

  it('a uuid made before a tool call is the same after a pause and resume, and after a crash recovery', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools });
    try {
      const t = await runtime.submit({ code: PROGRAM, seed: 19 });
      const paused = await runtime.run(t.task_id);
      expect(paused.pause_reason).toBe('approval_required');
      const approval = paused.pending_approvals[0];
      expect(approval?.tool).toBe('tools.pay');
      const journal = await fx.store.readJournal(t.task_id);
      // The interval's three rounds are journaled like any timer.
      expect(
        journal.filter((e) => e.type === 'tool_intent' && JSON.stringify(e.data).includes('"timer"')),
      ).toHaveLength(3);

      await runtime.decide(t.task_id, [{ approvalId: approval?.id ?? '', decision: 'approve' }]);
      const done = await runtime.run(t.task_id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const out = done.result?.output as Output;
      // record ran once, in the first run; the resumed run made the same uuid and bytes again (else its record call
      // would have diverged from the journal).
      expect(recorded).toEqual([[out.id, out.bytes]]);
      expect(paid).toEqual([{ v: out.later }]);
      expect(approval?.arguments).toEqual({ v: out.later });
      expect(out.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set([out.id, out.later, out.after]).size).toBe(3);
      expect(out.ticks).toBe(3);

      // A worker died after record's outcome: another runtime recovers the task from what it journaled.
      const until = journal.findIndex((e) => e.type === 'tool_outcome') + 1;
      expect(until).toBeGreaterThan(0);
      const again = await fx.store.createTask({
        kind: 'code',
        code: PROGRAM,
        language: 'javascript',
        seed: 19,
      });
      await journalAsDeadWorker(
        fx.store,
        again.id,
        journal.slice(0, until).map((e) => ({ type: e.type, data: e.data }) as JournalEntryInput),
      );
      const recovered = await runtime.run(again.id);
      expect(recovered.status, JSON.stringify(recovered.error)).toBe('paused');
      expect(recovered.pending_approvals[0]?.arguments).toEqual({ v: out.later });
      expect(recorded).toHaveLength(1);
      await runtime.decide(again.id, [
        { approvalId: recovered.pending_approvals[0]?.id ?? '', decision: 'approve' },
      ]);
      const finished = await runtime.run(again.id);
      expect(finished.status, JSON.stringify(finished.error)).toBe('succeeded');
      expect(finished.result?.output).toEqual(out);
    } finally {
      await runtime.close();
    }
  }, 30_000);

  it('a journal whose uuid is not the one the seed makes is a REPLAY_DIVERGENCE, never a success', async () => {
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools });
    try {
      const t = await runtime.submit({ code: PROGRAM, seed: 19 });
      await runtime.run(t.task_id);
      const journal = await fx.store.readJournal(t.task_id);
      const until = journal.findIndex((e) => e.type === 'tool_outcome') + 1;
      // As if the first run had made another uuid (an unseeded source would): the replay makes the seed's.
      const tampered = journal.slice(0, until).map((e) => {
        const entry = { type: e.type, data: e.data } as JournalEntryInput;
        if (e.type !== 'tool_intent') return entry;
        const data = e.data as { args: string };
        return {
          ...entry,
          data: { ...data, args: data.args.replace(/[0-9a-f]{8}-/, '00000000-') },
        } as JournalEntryInput;
      });
      const other = await fx.store.createTask({
        kind: 'code',
        code: PROGRAM,
        language: 'javascript',
        seed: 19,
      });
      await journalAsDeadWorker(fx.store, other.id, tampered);
      const r = await runtime.run(other.id);
      expect(r.status).toBe('failed');
      expect(r.error?.code).toBe('REPLAY_DIVERGENCE');
    } finally {
      await runtime.close();
    }
  }, 30_000);
});
