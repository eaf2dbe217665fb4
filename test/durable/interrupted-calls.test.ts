import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { journalAsDeadWorker, payTool, useDurableFixture } from './fixture.ts';

// Calls interrupted between their intent and their outcome (a pause, a crash): an unsafe call never runs twice,
// and one that cannot have started asks for what it needs (approval), not for attention.
// Each case was a bug (a review's finding, or one the state-machine property test found, as its minimal case):
// the comment says what is correct and what went wrong before the fix; the test asserts the correct behaviour.

describe('calls interrupted between intent and outcome', () => {
  const fx = useDurableFixture('interrupted-calls');
  const paid: unknown[] = [];
  const tools = new ToolRegistry([payTool(paid)]);

  it('an approval-gated call lost before its approval request asks for approval, not attention', async () => {
    const runner = new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'C' });
    const t = await fx.store.createTask({
      kind: 'code',
      code: 'return await tools.pay({ n: 3 });',
      language: 'javascript',
      seed: 1,
    });
    // The worker died after journaling the intent, before the approval request: the call cannot have run.
    await journalAsDeadWorker(fx.store, t.id, [
      { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.pay', args: '{"n":3}' } },
    ]);
    const after = await runner.runTask(t.id);
    expect(paid).not.toContainEqual({ n: 3 });
    expect(after).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
  });

  it("a pause between an unsafe call's intent and its start does not make the call need attention", async () => {
    const sent: string[] = [];
    const send = defineTool({
      name: 'send',
      description: 'unsafe',
      effect: 'unsafe',
      execute: (a) => {
        sent.push((a as { to: string }).to);
        return 'sent';
      },
    });
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools: new ToolRegistry([send]) });
    const t = await runtime.submit({ code: "return await tools.send({ to: 'x' });" });
    // Pause the moment the intent is committed: the tool has not started yet.
    const off = runtime.subscribe(t.task_id, (e) => {
      if (e.type === 'journal' && e.entries.some((x) => x.type === 'tool_intent'))
        void runtime.pause(t.task_id);
    });
    const paused = await runtime.run(t.task_id);
    off();
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    expect(sent).toEqual([]);
    await runtime.resume(t.task_id);
    const done = await runtime.run(t.task_id);
    expect(done).toMatchObject({ status: 'succeeded', result: { output: 'sent' } });
    expect(sent).toEqual(['x']);
    await runtime.close();
  });

  // Correct: an unsafe call that was journaled `not_started` (a pause between its intent and its start) and then
  // started on resume must never run a second time. After a crash during that second run the task must pause
  // with needs_attention. Bug: JournalMemory.notStarted was never cleared and running the call (JournalingHost.call ->
  // runLive) journaled no "started" marker, so every later recovery re-ran it.
  it('an unsafe call resumed after not_started never runs twice after a crash', async () => {
    const sent: string[] = [];
    let crash: (() => Promise<void>) | undefined;
    const send = defineTool({
      name: 'send',
      description: 'unsafe',
      effect: 'unsafe',
      execute: async (a) => {
        sent.push((a as { to: string }).to);
        // The worker running this call dies before the outcome is journaled.
        if (crash) await crash();
        return 'sent';
      },
    });
    const tools = new ToolRegistry([send]);
    const runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools });
    const t = await runtime.submit({ code: "return await tools.send({ to: 'x' });" });
    const off = runtime.subscribe(t.task_id, (e) => {
      if (e.type === 'journal' && e.entries.some((x) => x.type === 'tool_intent'))
        void runtime.pause(t.task_id);
    });
    await expect(runtime.run(t.task_id)).resolves.toMatchObject({ status: 'paused' });
    off();
    expect(sent).toEqual([]);
    const journal = await fx.store.readJournal(t.task_id);
    expect(journal.some((e) => e.type === 'control' && e.data.action === 'not_started')).toBe(true);
    await runtime.resume(t.task_id);
    await runtime.close();

    // Worker B (its own connection) runs the call, then "dies": its store goes away before the outcome is written.
    const other = await createSqliteTaskStore({ path: fx.path });
    crash = () => other.close();
    const b = new TaskRunner({ store: other, driver: fx.driver, tools, owner: 'B', leaseMs: 200 });
    await b.runTask(t.task_id).catch(() => undefined);
    expect(sent).toEqual(['x']);
    crash = undefined;
    await sleep(300); // B's lease expires

    const c = new TaskRunner({ store: fx.store, driver: fx.driver, tools, owner: 'C' });
    const after = await c.runTask(t.task_id);
    expect(sent).toEqual(['x']); // bug: ['x', 'x']
    expect(after).toMatchObject({ status: 'paused', pauseReason: 'needs_attention' });
  });
});
