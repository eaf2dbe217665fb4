import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer, consumed in order, one per request. */
export type ScriptStep =
  | { readonly kind: 'json'; readonly body: unknown; readonly status?: number; readonly delayMs?: number }
  | { readonly kind: 'raw'; readonly body: string; readonly status?: number }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly body?: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** Never answers; the connection stays open until the client gives up or the server closes. */
  | { readonly kind: 'hang' }
  /**
   * A streamed reply: each event as a `data:` line of server-sent events, `intervalMs` apart, then `[DONE]`. What
   * the client let it send is in `streams` (a client that aborts closes the connection before the end).
   */
  | { readonly kind: 'sse'; readonly events: readonly unknown[]; readonly intervalMs?: number };

/** How one streamed reply went: events written before the client closed the connection, if it did. */
export interface StreamRecord {
  readonly total: number;
  sent: number;
  closedEarly: boolean;
  /** Resolves when the stream ended, by its end or the client's close. */
  readonly ended: Promise<void>;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export interface ScriptedModelServer {
  /** Base URL up to `/v1`, as a client config takes it. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** The streamed replies, in order. */
  readonly streams: StreamRecord[];
  push(...steps: ScriptStep[]): void;
  /** Resolves when the n-th request (1-based) has arrived. */
  requestArrived(n: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** A string goes as is; anything else is sent as a JSON object (the Mistral way). */
  readonly arguments: unknown;
}

/** A chat-completions reply with text and/or tool calls. */
export function reply(
  options: {
    content?: string | null;
    toolCalls?: readonly ScriptedToolCall[];
    finishReason?: string;
    model?: string;
    usage?: { prompt: number; completion: number };
    delayMs?: number;
  } = {},
): ScriptStep {
  const toolCalls = options.toolCalls ?? [];
  const message: Record<string, unknown> = { role: 'assistant', content: options.content ?? null };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const usage = options.usage ?? { prompt: 10, completion: 5 };
  const body = {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: options.model ?? 'scripted-model',
    choices: [
      {
        index: 0,
        message,
        finish_reason: options.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  };
  return options.delayMs === undefined
    ? { kind: 'json', body }
    : { kind: 'json', body, delayMs: options.delayMs };
}

/** A real HTTP server on 127.0.0.1 answering POST /v1/chat/completions from a script. */
export async function startScriptedModelServer(
  script: readonly ScriptStep[] = [],
): Promise<ScriptedModelServer> {
  const queue = [...script];
  const requests: RecordedRequest[] = [];
  const streams: StreamRecord[] = [];
  const waiters: { n: number; resolve: (r: RecordedRequest) => void }[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { unparsable: text };
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      for (const waiter of waiters.filter((w) => w.n === requests.length)) waiter.resolve(recorded);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
        return;
      }
      answer(res, queue.shift());
    });
  });

  function answer(res: ServerResponse, step: ScriptStep | undefined): void {
    // 418 is never retried, so an exhausted script fails the test at once and says why.
    if (step === undefined) return send(res, 418, { error: { message: 'scripted model: script exhausted' } });
    switch (step.kind) {
      case 'json':
        if (step.delayMs === undefined) return send(res, step.status ?? 200, step.body);
        {
          const timer = setTimeout(() => {
            timers.delete(timer);
            send(res, step.status ?? 200, step.body);
          }, step.delayMs);
          timers.add(timer);
        }
        return;
      case 'raw':
        res.writeHead(step.status ?? 200, { 'content-type': 'application/json' });
        res.end(step.body);
        return;
      case 'error':
        return send(
          res,
          step.status,
          step.body ?? { error: { message: `scripted ${step.status}` } },
          step.headers,
        );
      case 'hang':
        return;
      case 'sse':
        return stream(res, step.events, step.intervalMs ?? 0);
    }
  }

  function stream(res: ServerResponse, events: readonly unknown[], intervalMs: number): void {
    let resolveEnded = (): void => undefined;
    const record: StreamRecord = {
      total: events.length,
      sent: 0,
      closedEarly: false,
      ended: new Promise<void>((resolve) => (resolveEnded = resolve)),
    };
    streams.push(record);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    let finished = false;
    res.on('close', () => {
      if (!finished) record.closedEarly = true;
      resolveEnded();
    });
    const next = (): void => {
      if (record.closedEarly || res.destroyed) return;
      if (record.sent === events.length) {
        finished = true;
        res.end('data: [DONE]\n\n');
        resolveEnded();
        return;
      }
      res.write(`data: ${JSON.stringify(events[record.sent])}\n\n`);
      record.sent++;
      const timer = setTimeout(() => {
        timers.delete(timer);
        next();
      }, intervalMs);
      timers.add(timer);
    };
    next();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    streams,
    push: (...steps) => queue.push(...steps),
    requestArrived(n) {
      const got = requests[n - 1];
      if (got !== undefined) return Promise.resolve(got);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A loopback port with nothing listening on it. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The events of a streamed reply whose text and tool-call arguments come in the given pieces. */
export function streamEvents(
  options: {
    content?: readonly string[];
    toolCall?: { readonly id: string; readonly name: string; readonly pieces: readonly string[] };
    finishReason?: string;
  } = {},
): unknown[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: 'chatcmpl-scripted',
    object: 'chat.completion.chunk',
    model: 'scripted-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of options.content ?? []) events.push(chunk({ content: piece }));
  const call = options.toolCall;
  if (call !== undefined) {
    events.push(
      chunk({
        tool_calls: [
          { index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of call.pieces)
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  events.push(chunk({}, options.finishReason ?? (call === undefined ? 'stop' : 'tool_calls')));
  return events;
}
