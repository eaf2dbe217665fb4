// Instruction tasks through the whole service: startService on loopback, a scripted model server, HTTP and SSE.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/service/index.ts';
import { defineTool } from '../../src/tools/index.ts';
import { reply, startScriptedModelServer } from '../model/scripted-model-server.ts';
import type { ScriptedModelServer } from '../model/scripted-model-server.ts';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';

const double = defineTool({
  name: 'double',
  description: 'Doubles a number.',
  input: z.object({ n: z.number() }),
  effect: 'read',
  execute: ({ n }: { n: number }) => n * 2,
});

async function startWith(dir: string, name: string, model: ScriptedModelServer | null): Promise<Service> {
  const config = loadConfig({
    env: {},
    flags: { port: '0', db: join(dir, `${name}.db`), insecureNoAuth: true },
  });
  return startService(config, {
    log: () => undefined,
    tools: [double],
    model: model ? { provider: 'openai', baseUrl: model.baseUrl, model: 'scripted', apiKey: 'k' } : null,
  });
}

async function until<T>(fn: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('instruction tasks in the service', () => {
  let dir: string;
  let model: ScriptedModelServer;
  let service: Service;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-agent-service-'));
    model = await startScriptedModelServer();
    service = await startWith(dir, 'agent', model);
  });
  afterAll(async () => {
    await service.close();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (body: unknown) =>
    fetch(`${service.address}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('runs an instruction task with per-task options and streams its steps', async () => {
    model.push(
      reply({
        content: '```js\nconst xs = await Promise.all([1, 2].map((n) => tools.double({ n })));\nxs\n```',
        delayMs: 150,
      }),
      reply({ content: '```js\nfinal_answer(xs.reduce((a, b) => a + b, 0))\n```' }),
    );
    const res = await post({
      instruction: 'double 1 and 2 and add',
      mode: 'code',
      max_steps: 5,
      model: 'other-model',
    });
    expect(res.status).toBe(201);
    const { task_id } = (await res.json()) as { task_id: string };
    const stream = await fetch(`${service.address}/api/v1/tasks/${task_id}/stream`);
    const text = await stream.text(); // the server ends the stream once the task has ended
    const events = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: journal'))
      .flatMap((block) => JSON.parse(block.split('\ndata: ')[1] ?? '') as { type: string }[]);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'model_reply')).toHaveLength(2);
    expect(types.filter((t) => t === 'step_result')).toHaveLength(2);
    expect(types.indexOf('model_reply')).toBeLessThan(types.indexOf('code_block'));
    const view = (await (await fetch(`${service.address}/api/v1/tasks/${task_id}`)).json()) as {
      status: string;
      result: { output: unknown };
      mode: string;
      instruction: string;
      steps: { tool_calls: unknown[] }[];
    };
    expect(view.status).toBe('succeeded');
    expect(view.result.output).toBe(6);
    expect(view.mode).toBe('code');
    expect(view.instruction).toBe('double 1 and 2 and add');
    expect(view.steps[0]?.tool_calls).toHaveLength(2);
    // The task's model option went to the provider.
    expect(model.requests.at(-1)?.body.model).toBe('other-model');
    // Both replies' token counts (10 + 5 each, as the scripted server reports them) reached the metrics.
    const metrics = await (await fetch(`${service.address}/metrics`)).text();
    expect(metrics).toContain('codecall_model_tokens_total{kind="prompt"} 20');
    expect(metrics).toContain('codecall_model_tokens_total{kind="completion"} 10');
  });

  it('refuses agent options on code tasks and both code and instruction', async () => {
    const both = await post({ code: 'return 1', instruction: 'x' });
    expect(both.status).toBe(400);
    const mode = await post({ code: 'return 1', mode: 'code' });
    expect(mode.status).toBe(400);
    expect(((await mode.json()) as { error: { details: { field: string } } }).error.details.field).toBe(
      'mode',
    );
    const steps = await post({ instruction: 'x', max_steps: 0 });
    expect(steps.status).toBe(400);
  });

  it('without a model, fails instruction tasks at once and still runs code tasks', async () => {
    const bare = await startWith(dir, 'bare', null);
    try {
      const send = (body: unknown) =>
        fetch(`${bare.address}/api/v1/tasks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<{ task_id: string }>);
      const get = (id: string) =>
        fetch(`${bare.address}/api/v1/tasks/${id}`).then(
          (r) =>
            r.json() as Promise<{
              status: string;
              error: { code: string; message: string } | null;
              result: { output: unknown } | null;
            }>,
        );
      const agent = await send({ instruction: 'anything' });
      const code = await send({ code: 'return await tools.double({ n: 21 })' });
      const failed = await until(async () => {
        const v = await get(agent.task_id);
        return v.status === 'failed' ? v : null;
      });
      expect(failed.error?.code).toBe('MODEL_NOT_CONFIGURED');
      expect(failed.error?.message).toContain('MISTRAL_API_KEY');
      const ran = await until(async () => {
        const v = await get(code.task_id);
        return v.status === 'succeeded' ? v : null;
      });
      expect(ran.result?.output).toBe(42);
    } finally {
      await bare.close();
    }
  });
});
