import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import { ToolRegistry } from '../../src/tools/index.ts';
import { reply } from '../model/scripted-model-server.ts';
import { agentTools, js, useAgentFixture } from './agent-fixture.ts';

describe('agent and a faulty or slow model', () => {
  const fx = useAgentFixture('agent-faults');

  it('rides out a 429 (Retry-After) and a 500 within one step', async () => {
    fx.model.push(
      { kind: 'error', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'error', status: 500 },
      reply({ content: js('final_answer(7)') }),
    );
    const before = fx.model.requests.length;
    const { task_id } = await fx.runtime.submit({ instruction: 'seven' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe(7);
    expect(fx.model.requests.length - before).toBe(3);
    const journal = await fx.store.readJournal(task_id);
    expect(journal.filter((e) => e.type === 'model_request')).toHaveLength(1);
  });

  it('fails with MODEL_UNAVAILABLE when the model keeps failing, and MODEL_AUTH on a refused key', async () => {
    fx.model.push(
      { kind: 'error', status: 503 },
      { kind: 'error', status: 503 },
      { kind: 'error', status: 503 },
    );
    const a = await fx.runtime.submit({ instruction: 'x' });
    expect((await fx.runtime.run(a.task_id)).error?.code).toBe('MODEL_UNAVAILABLE');
    fx.model.push({ kind: 'error', status: 401 });
    const b = await fx.runtime.submit({ instruction: 'x' });
    const refused = await fx.runtime.run(b.task_id);
    expect(refused.status).toBe('failed');
    expect(refused.error?.code).toBe('MODEL_AUTH');
  });

  it('pauses while waiting for a slow model and asks again on resume, journaling the request once', async () => {
    fx.model.push({ kind: 'hang' });
    const { task_id } = await fx.runtime.submit({ instruction: 'slow' });
    const before = fx.model.requests.length;
    const running = fx.runtime.run(task_id);
    await fx.model.requestArrived(before + 1); // the model holds this one and never answers
    await fx.runtime.pause(task_id);
    const paused = await running;
    expect(paused.status).toBe('paused');
    expect(paused.pause_reason).toBe('user_request');
    fx.model.push(reply({ content: 'fine' }));
    await fx.runtime.resume(task_id);
    const done = await fx.runtime.run(task_id);
    expect(done.status).toBe('succeeded');
    expect(done.result?.output).toBe('fine');
    const journal = await fx.store.readJournal(task_id);
    expect(journal.filter((e) => e.type === 'model_request')).toHaveLength(1);
    expect(journal.filter((e) => e.type === 'model_reply')).toHaveLength(1);
  });

  it('runs TypeScript steps', async () => {
    fx.model.push(
      reply({
        content:
          '```ts\ninterface P { cents: number }\nconst p: P = await tools.get_price({ product: "ab" });\np.cents satisfies number\n```',
      }),
      reply({ content: '```typescript\nfinal_answer((p as P).cents + 1)\n```' }),
    );
    const { task_id } = await fx.runtime.submit({ instruction: 'ts', language: 'typescript' });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe(201);
    const system = (fx.model.requests.at(-1)?.body.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain('writing TypeScript');
  });

  it('keeps Mistral tool-call ids consistent through the conversation (function calling)', async () => {
    const registry = new ToolRegistry(agentTools([]));
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: registry,
      agent: createAgent({
        model: createOpenAiClient({
          provider: 'mistral',
          baseUrl: fx.model.baseUrl,
          model: 'm',
          apiKey: 'k',
        }),
        tools: registry.definitions,
      }),
    });
    try {
      fx.model.push(
        // Mistral sends arguments as objects; ids are 9 alphanumerics.
        reply({ toolCalls: [{ id: 'Ab3dE6gH9', name: 'get_price', arguments: { product: 'tea' } }] }),
        reply({ content: 'tea costs 300' }),
      );
      const { task_id } = await runtime.submit({ instruction: 'tea?', mode: 'function_calling' });
      const view = await runtime.run(task_id);
      expect(view.status).toBe('succeeded');
      const body = fx.model.requests.at(-1)?.body as {
        messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
        tool_choice?: unknown;
      };
      const assistant = body.messages.find((m) => m.role === 'assistant');
      const tool = body.messages.find((m) => m.role === 'tool');
      expect(assistant?.tool_calls?.[0]?.id).toMatch(/^[A-Za-z0-9]{9}$/);
      expect(tool?.tool_call_id).toBe(assistant?.tool_calls?.[0]?.id);
    } finally {
      await runtime.close();
    }
  });
});
