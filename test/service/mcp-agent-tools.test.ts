// An instruction task's prompt lists the tools its programs can call (ADR 0047, 2026-12-06): after an MCP server's
// tools/list_changed, a task begun before keeps its list in every step (its programs run with that set), and a
// task begun after lists the new tools. A real MCP server (test/support) and a scripted model server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/service/index.ts';
import { loadConfig } from '../../src/service/config.ts';
import { reply, startScriptedModelServer } from '../model/scripted-model-server.ts';
import type { ScriptedModelServer } from '../model/scripted-model-server.ts';

const SERVER = new URL('../support/mcp-test-server.ts', import.meta.url).pathname;
const LATE = 'A tool added while the server ran.';

describe('instruction tasks and a changing MCP tool list', () => {
  let dir: string;
  let model: ScriptedModelServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-agent-'));
    model = await startScriptedModelServer();
  });
  afterAll(async () => {
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a task begun before the change keeps its list; one begun after sees the new tool', async () => {
    const config = loadConfig({
      env: {},
      flags: {
        db: join(dir, 'tasks.db'),
        insecureNoAuth: true,
        python: false,
        mcpServers: JSON.stringify([
          {
            name: 'gh',
            command: process.execPath,
            args: ['--import', 'tsx', SERVER],
            env: { MCP_EXTRA_TOOLS: '1' },
          },
        ]),
      },
    });
    const core = await createService(config, {
      log: () => undefined,
      model: { provider: 'openai', baseUrl: model.baseUrl, model: 'scripted', apiKey: 'k' },
    });
    const names = () => core.tools.map((t) => `${t.namespace}.${t.name}`);
    const systemPrompt = (n: number) => {
      const messages = model.requests[n - 1]?.body.messages as { role: string; content: string }[];
      return messages.find((m) => m.role === 'system')?.content ?? '';
    };
    try {
      await core.start();
      // Step 1 adds a tool (the server says its list changed); step 2 answers.
      model.push(
        reply({ content: "```js\nawait tools.gh.add_tool();\n'added'\n```" }),
        reply({ content: "```js\nfinal_answer('done')\n```" }),
      );
      const early = await core.runtime.submit({ instruction: 'add a tool', mode: 'code', maxSteps: 4 });
      expect(await core.runtime.wait(early.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 'done' },
      });
      for (let i = 0; i < 200 && !names().includes('tools.gh.late'); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(names()).toContain('tools.gh.late');
      expect(model.requests).toHaveLength(2);
      // Both steps of the early task list the tools it began with (its programs could not call `late`).
      expect(systemPrompt(1)).toContain('add_tool');
      expect(systemPrompt(1)).not.toContain(LATE);
      expect(systemPrompt(2)).not.toContain(LATE);

      model.push(reply({ content: '```js\nfinal_answer(await tools.gh.late())\n```' }));
      const later = await core.runtime.submit({
        instruction: 'call the new tool',
        mode: 'code',
        maxSteps: 2,
      });
      expect(await core.runtime.wait(later.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 'late' },
      });
      // Its prompt lists the new tool: what its program can call.
      expect(systemPrompt(3)).toContain(LATE);
    } finally {
      await core.close();
    }
  });
});
