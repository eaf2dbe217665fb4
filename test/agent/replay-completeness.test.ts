import { describe, expect, it } from 'vitest';
import type { JournalEntryInput } from '../../src/spec/index.ts';
import { reply } from '../model/scripted-model-server.ts';
import { journalAsDeadWorker } from '../durable/fixture.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

// Issue 15, class 1, for agent steps: a step's program that, run again after a crash, ends before asking again
// for a call its step journaled is REPLAY_DIVERGENCE (which ends the agent's run), never a step that succeeded.

const PAYS =
  'const p = await tools.get_price({ product: "tea" });\nconst r = await tools.send_invoice({ to: "ann", cents: p.cents });\nfinal_answer(r)';
const SKIPS = 'const p = await tools.get_price({ product: "tea" });\nfinal_answer({ skipped: true })';

describe('agent steps cannot skip their journal', () => {
  const fx = useAgentFixture('agent-replay-completeness');

  it('a step rerun after a crash that skips its journaled invoice fails with REPLAY_DIVERGENCE', async () => {
    // A real run writes the step's journal: the model's reply, the code block, both calls (the invoice approved).
    fx.model.push(reply({ content: js(PAYS) }));
    const first = await fx.runtime.submit({ instruction: 'invoice ann for tea' });
    const paused = await fx.runtime.run(first.task_id);
    expect(paused.status).toBe('paused');
    await fx.runtime.decide(first.task_id, [
      { approvalId: paused.pending_approvals[0]!.id, decision: 'approve' },
    ]);
    expect((await fx.runtime.run(first.task_id)).status).toBe('succeeded');
    const journal = await fx.store.readJournal(first.task_id);
    const stepEnd = journal.findIndex((e) => e.type === 'step_result');
    expect(stepEnd).toBeGreaterThan(0);
    expect(fx.calls.map((c) => c.name)).toEqual(['get_price', 'send_invoice']);

    // The same journal up to the step's end, as a worker that crashed there left it, but the step's program
    // now takes another branch (what a source outside the journal could make it do): it never sends the invoice.
    const swap = (text: string) => text.replace(PAYS, SKIPS);
    const crashed = journal.slice(0, stepEnd).map((e): JournalEntryInput => {
      const { type, data } = e as JournalEntryInput;
      if (type === 'code_block') return { type, data: { ...data, code: swap(data.code ?? '') } };
      if (type === 'model_reply') return { type, data: { ...data, content: swap(data.content ?? '') } };
      return { type, data } as JournalEntryInput;
    });
    expect(JSON.stringify(crashed)).toContain('skipped');
    const second = await fx.runtime.submit({ instruction: 'invoice ann for tea' });
    await journalAsDeadWorker(fx.store, second.task_id, crashed);
    fx.calls.length = 0;
    const view = await fx.runtime.run(second.task_id);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('REPLAY_DIVERGENCE');
    expect(view.error?.message).toMatch(/call-2: the journal has tools\.send_invoice/);
    expect(fx.calls).toEqual([]);
  });
});
