import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/codec/index.ts';
import { reply } from '../model/scripted-model-server.ts';
import { startCrashWorker } from '../durable/crash-fixture.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

describe('agent crash recovery', () => {
  const fx = useAgentFixture('agent-crash');

  /** Runs the task in a worker that SIGKILLs itself at `killAt`; resolves with its exit code and tool calls. */
  async function crashWorker(taskId: string, killAt: string) {
    const callsPath = join(fx.dir, `worker-calls-${taskId}.txt`);
    writeFileSync(callsPath, '');
    const args = [fx.path, fx.model.baseUrl, taskId, callsPath, killAt];
    const worker = startCrashWorker('../agent/crash-worker-agent.ts', args);
    const code = await worker.exited;
    expect(worker.stderr()).not.toContain('not killed');
    return { code, calls: readFileSync(callsPath, 'utf8') };
  }

  /** Runs the task here once the dead worker's lease (300 ms) has run out. */
  async function recover(taskId: string) {
    for (let i = 0; i < 100; i++) {
      const view = await fx.runtime.run(taskId).catch(() => null);
      if (view && view.status !== 'running') return view;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} was never recovered`);
  }

  it('a crash between the model reply and the first tool call is recovered without asking the model again', async () => {
    fx.model.push(
      reply({
        content: js(
          'const p = await tools.get_price({ product: "tea" });\nconsole.log("price", p.cents);\nfinal_answer(p.cents * 2)',
        ),
      }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'twice the price of tea' });
    const worker = await crashWorker(task_id, 'reply');
    expect(worker.code).toBeNull(); // killed by its signal
    expect(worker.calls).toBe(''); // it died before any tool call
    const journal = await fx.store.readJournal(task_id);
    expect(journal.filter((e) => e.type === 'model_reply')).toHaveLength(1);
    expect(journal.some((e) => e.type === 'code_block')).toBe(false);
    const view = await recover(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe(600);
    expect(fx.model.requests).toHaveLength(1);
    expect(fx.calls.map((c) => c.name)).toEqual(['get_price']);
    expect(view.result?.execution_log.map((l) => l.message)).toEqual(['price 300']);
  });

  it('a crash inside step 2 (in a Promise.all) replays step 1 and the committed calls, and asks the model nothing', async () => {
    fx.model.push(
      reply({ content: js('const base = await tools.get_price({ product: "tea" });\nbase.cents') }),
      reply({
        content: js(
          'const more = await Promise.all(["ab", "abc", "abcd"].map((product) => tools.get_price({ product })));\nfinal_answer(base.cents + more.reduce((s, p) => s + p.cents, 0))',
        ),
      }),
    );
    const before = fx.model.requests.length;
    const { task_id } = await fx.runtime.submit({ instruction: 'sum of prices' });
    expect((await crashWorker(task_id, 'outcome:2')).code).toBeNull();
    const journal = await fx.store.readJournal(task_id);
    const committed = new Set(
      journal.filter((e) => e.type === 'tool_outcome').map((e) => String(e.data.call_id)),
    );
    // Step 1's call and one call of step 2 were committed before the kill.
    expect(committed.size).toBeGreaterThanOrEqual(2);
    const productOf = new Map(
      journal
        .filter((e) => e.type === 'tool_intent')
        .map((e) => [
          String(e.data.call_id),
          (decodeValue(String(e.data.args)) as { product: string }).product,
        ]),
    );
    const committedProducts = [...committed].map((id) => productOf.get(id));
    expect(committedProducts).toContain('tea');
    const view = await recover(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe(300 + 200 + 300 + 400);
    expect(fx.model.requests.length - before).toBe(2);
    // Nothing whose outcome was committed ran again; the rest ran once here.
    const ranHere = fx.calls.map((c) => (c.args as { product: string }).product);
    for (const product of committedProducts) expect(ranHere).not.toContain(product);
    expect(ranHere).toHaveLength(4 - committed.size);
  });
});
