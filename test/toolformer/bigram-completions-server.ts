// A completions server on loopback that scores prompts with a bigram model, the way vLLM answers `echo: true,
// logprobs: N`: the legacy logprobs shape, null for the first token, text offsets in code points (Python's), and
// the one new token that vLLM insists on (max_tokens >= 1) when asked to behave like it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tokenize, type BigramModel } from './bigram-model.ts';

export interface BigramServerOptions {
  /** Refuse `max_tokens: 0` with a 400, as vLLM does. */
  readonly refuseZeroMaxTokens?: boolean;
  /** Refuse echo with a 400, as llama.cpp's own llama-server does. */
  readonly refuseEcho?: boolean;
  /** Listen on this port (default: any free one). */
  readonly port?: number;
  /** Wait this long before each answer. */
  readonly delayMs?: number;
  /** Keep each request's body in `requests` (default true; a benchmark's millions would fill memory). */
  readonly record?: boolean;
  /**
   * Answers a request without `echo` (sampling: `n`, `temperature`, `stop`): the completions' texts for the prompt,
   * cycled to `n` choices. Absent: such a request is refused (the bigram model only scores).
   */
  readonly complete?: (prompt: string) => readonly string[];
  /** Rewrites each reply body before it is sent (to make malformed ones). */
  readonly mangle?: (body: Record<string, unknown>) => unknown;
}

export interface BigramServer {
  readonly baseUrl: string;
  readonly requests: Record<string, unknown>[];
  close(): Promise<void>;
}

/** The completions reply for `prompt` (and `maxTokens` new tokens, 0 or 1) under the model. */
export function bigramReply(
  model: BigramModel,
  prompt: string,
  topN: number,
  maxTokens: number,
): Record<string, unknown> {
  const spans = tokenize(prompt);
  let text = prompt;
  if (maxTokens > 0 && spans.length > 0) {
    const [next = ' '] = model.top((spans.at(-1) as { token: string }).token, 1)[0] ?? [];
    spans.push({ token: next, start: prompt.length });
    text += next;
  }
  const tokens = spans.map((s) => s.token);
  const logprobs = tokens.map((t, i) => (i === 0 ? null : model.logprob(tokens[i - 1] as string, t)));
  const top = tokens.map((t, i) => {
    if (i === 0) return null;
    const entries = Object.fromEntries(model.top(tokens[i - 1] as string, topN));
    return { ...entries, [t]: model.logprob(tokens[i - 1] as string, t) };
  });
  // Python counts code points: an emoji is one, where JavaScript's UTF-16 counts two.
  const offsets = spans.map((s) => [...text.slice(0, s.start)].length);
  return {
    id: 'cmpl-bigram',
    object: 'text_completion',
    model: 'bigram',
    choices: [
      {
        index: 0,
        text,
        logprobs: { tokens, token_logprobs: logprobs, text_offset: offsets, top_logprobs: top },
        finish_reason: 'length',
      },
    ],
    usage: { prompt_tokens: tokens.length - maxTokens, completion_tokens: maxTokens },
  };
}

export async function startBigramServer(
  model: BigramModel,
  options: BigramServerOptions = {},
): Promise<BigramServer> {
  const requests: Record<string, unknown>[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return send(res, 400, { error: { message: 'not JSON' } });
      }
      if (options.record !== false) requests.push(body);
      if (req.method !== 'POST' || req.url !== '/v1/completions') {
        return send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      }
      if (body.echo !== true && typeof body.prompt === 'string') {
        if (options.complete === undefined) return send(res, 400, { error: { message: 'echo only' } });
        const texts = options.complete(body.prompt);
        const n = typeof body.n === 'number' ? body.n : 1;
        const choices = Array.from({ length: texts.length === 0 ? 0 : n }, (_, index) => ({
          index,
          text: texts[index % texts.length],
          logprobs: null,
          finish_reason: 'stop',
        }));
        const reply = { id: 'cmpl-scripted', object: 'text_completion', model: 'bigram', choices };
        return later(res, options.mangle === undefined ? reply : options.mangle(reply));
      }
      if (options.refuseEcho === true && body.echo === true) {
        return send(res, 400, { error: { message: 'Only no echo is supported' } });
      }
      const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16;
      if (options.refuseZeroMaxTokens === true && maxTokens < 1) {
        return send(res, 400, { error: { message: 'max_tokens must be at least 1, got 0.' } });
      }
      if (typeof body.prompt !== 'string')
        return send(res, 400, { error: { message: 'prompt must be a string' } });
      const reply = bigramReply(model, body.prompt, Number(body.logprobs ?? 0), Math.min(1, maxTokens));
      later(res, options.mangle === undefined ? reply : options.mangle(reply));
    });
  });
  function later(res: ServerResponse, out: unknown): void {
    if (options.delayMs === undefined) return send(res, 200, out);
    const timer = setTimeout(() => {
      timers.delete(timer);
      send(res, 200, out);
    }, options.delayMs);
    timers.add(timer);
  }
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}
