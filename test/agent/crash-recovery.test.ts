import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../model/scripted-model-server.ts';
import { startCrashWorker } from '../durable/crash-fixture.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

describe('agent crash recovery', () => {
  const fx = useAgentFixture('agent-crash');

  it('a crash between the model reply and the first tool call is recovered without asking the model again', async () => {
    fx.model.push(
      reply({
        content: js(
          'const p = await tools.get_price({ product: "tea" });\nconsole.log("price", p.cents);\nfinal_answer(p.cents * 2)',
        ),
      }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'twice the price of tea' });
    const callsPath = join(fx.dir, 'worker-calls.txt');
    writeFileSync(callsPath, '');
    const worker = startCrashWorker('../agent/crash-worker-agent.ts', [
      fx.path,
      fx.model.baseUrl,
      task_id,
      callsPath,
    ]);
    const code = await worker.exited;
    expect(worker.stderr()).not.toContain('not killed');
    expect(code).toBeNull(); // killed by its signal
    expect(readFileSync(callsPath, 'utf8')).toBe(''); // it died before any tool call
    const journal = await fx.store.readJournal(task_id);
    expect(journal.filter((e) => e.type === 'model_reply')).toHaveLength(1);
    expect(journal.some((e) => e.type === 'code_block')).toBe(false);
    // This process recovers the task once the dead worker's lease (300 ms) has run out.
    let view = null;
    for (let i = 0; i < 100 && view === null; i++) {
      view = await fx.runtime.run(task_id).catch(() => null);
      if (view?.status === 'running') view = null;
      if (view === null) await new Promise((r) => setTimeout(r, 50));
    }
    expect(view?.status).toBe('succeeded');
    expect(view?.result?.output).toBe(600);
    expect(fx.model.requests).toHaveLength(1);
    expect(fx.calls.map((c) => c.name)).toEqual(['get_price']);
    expect(view?.result?.execution_log.map((l) => l.message)).toEqual(['price 300']);
  });
});
