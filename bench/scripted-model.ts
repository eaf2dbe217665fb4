// A chat-completions server for the benches: answers after a fixed latency with what a policy says, and counts
// tokens the same way for every mode (4 characters per token of what is sent and received).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments?: string } }[];
}

export interface ScriptedRequest {
  messages: ScriptedMessage[];
  tools?: { function: { name: string } }[];
}

/** What the model answers: text, or tool calls (name and arguments). */
export type ScriptedAnswer = string | { name: string; args: Record<string, unknown> }[];

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/** Whether the request is code mode's (its one tool is `run_code`) rather than function calling's. */
export const isCodeMode = (body: ScriptedRequest): boolean =>
  (body.tools ?? []).some((t) => t.function.name === 'run_code');

export async function startScriptedModel(options: {
  latencyMs: number;
  answer: (body: ScriptedRequest) => ScriptedAnswer;
}): Promise<{ baseUrl: string; close: () => void }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const answer = options.answer(JSON.parse(text) as ScriptedRequest);
      const message =
        typeof answer === 'string'
          ? { role: 'assistant', content: answer }
          : {
              role: 'assistant',
              content: null,
              tool_calls: answer.map((c) => ({
                id: `call_${calls++}`,
                type: 'function',
                function: { name: c.name, arguments: JSON.stringify(c.args) },
              })),
            };
      const usage = {
        prompt_tokens: estimateTokens(text),
        completion_tokens: estimateTokens(JSON.stringify([message.content, message.tool_calls ?? null])),
      };
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'bench',
            object: 'chat.completion',
            created: 0,
            model: 'bench-policy',
            choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
            usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
          }),
        );
      }, options.latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => server.close(),
  };
}
