// The agent (createAgent over the OpenAI-protocol client) against the task agent conformance suite, its model a
// scripted chat-completions server on loopback.
import { createAgent } from '../../src/agent/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import { describeTaskAgentConformance } from '../conformance/task-agent-conformance.ts';
import type { ScriptStep } from '../model/scripted-model-server.ts';
import { reply, startScriptedModelServer } from '../model/scripted-model-server.ts';
import { js } from './agent-fixture.ts';

describeTaskAgentConformance('createAgent', async (script) => {
  const model = await startScriptedModelServer();
  const steps: ScriptStep[] = [];
  if (script.program !== undefined) steps.push(reply({ content: js(script.program) }));
  if (script.answer !== undefined) steps.push(reply({ content: script.answer }));
  if (script.hang === true) steps.push({ kind: 'hang' });
  model.push(...steps);
  const agent = createAgent({
    model: createOpenAiClient({
      provider: 'openai',
      baseUrl: model.baseUrl,
      model: 'scripted',
      maxRetries: 0,
    }),
    tools: [],
  });
  return { agent, modelRequests: () => model.requests.length, close: () => model.close() };
});
