import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelemetry } from '../../src/service/telemetry-provider.ts';
import type { Telemetry } from '../../src/service/telemetry-provider.ts';
import { js, useAgentFixture } from '../agent/agent-fixture.ts';
import { reply } from '../model/scripted-model-server.ts';
import { OtlpReceiver } from './otlp-receiver.ts';
import type { ReceivedSpan } from './otlp-receiver.ts';

// An agent's spans: run > step > (model request `chat {model}`, sandbox execution > tool calls), with the GenAI
// attributes the scripted model server's replies carry.
describe('the spans of an agent task', () => {
  const fx = useAgentFixture('otel-agent');
  let receiver: OtlpReceiver;
  let telemetry: Telemetry | null;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    telemetry = startTelemetry(
      {
        url: receiver.url,
        serviceName: 'codecall-agent-test',
        sampler: 'always_on',
        ratio: 1,
        includeContent: true,
        contentMaxBytes: 64,
        headers: {},
      },
      { scheduledDelayMs: 50 },
    );
  });
  afterAll(async () => {
    await telemetry?.shutdown();
    await receiver?.close();
  });

  it('a step with a model request and the program it ran, under the caller trace', async () => {
    fx.model.push(
      reply({
        content: js('const p = await tools.get_price({ product: "tea" });\nfinal_answer({ cents: p.cents })'),
        usage: { prompt: 120, completion: 30 },
        model: 'scripted-1',
      }),
    );
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const { task_id } = await fx.runtime.submit({
      instruction: 'What does tea cost?',
      traceContext: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    await telemetry?.forceFlush();
    await receiver.waitFor(() => receiver.runsOf(task_id).length === 1);
    const [run] = receiver.runsOf(task_id) as [ReceivedSpan];
    expect(run.traceId).toBe(traceId);
    expect(run.parentSpanId).toBe('b7ad6b7169203331');
    expect(run.attributes['gen_ai.operation.name']).toBe('invoke_agent');
    await receiver.waitFor(() => receiver.below(run).some((s) => s.name === 'execute_tool tools.get_price'));
    const below = receiver.below(run);
    const step = below.find(
      (s) => s.name === 'codecall.agent.step' && s.attributes['codecall.agent.step'] === 1,
    );
    expect(step?.parentSpanId).toBe(run.spanId);
    const chat = below.find((s) => s.name === 'chat scripted');
    expect(chat?.parentSpanId).toBe(step?.spanId);
    expect(chat?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.model': 'scripted-1',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    // Content was asked for, cut to the cap and marked with its length.
    expect(String(chat?.attributes['gen_ai.input.messages'])).toMatch(/… \(\d+ characters\)$/);
    const sandbox = below.find((s) => s.name === 'codecall.sandbox.execute');
    expect(sandbox?.parentSpanId).toBe(step?.spanId);
    expect(String(sandbox?.attributes['codecall.sandbox.code']).length).toBeLessThan(120);
    const tool = below.find((s) => s.name === 'execute_tool tools.get_price');
    expect(tool?.parentSpanId).toBe(sandbox?.spanId);
    expect(tool?.attributes['gen_ai.tool.call.arguments']).toBe('{"product":"tea"}');
  });
});
