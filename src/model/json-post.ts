import { CodecallError } from '../errors/index.ts';
import { deadlineSignal } from '../spec/index.ts';
import { providerErrorMessage } from './chat-completions-reply.ts';
import {
  DEFAULT_MAX_RETRY_DELAY_MS,
  DEFAULT_RETRY_BASE_MS,
  backoffDelayMs,
  parseRetryAfterMs,
  sleep,
} from './retry-delay.ts';

export const DEFAULT_MODEL_TIMEOUT_MS = 60_000;
export const DEFAULT_MODEL_MAX_RETRIES = 3;

/** How to reach a provider, shared by the chat-completions client and the completions (log-probability) one. */
export interface ProviderHttpOptions {
  /** Up to and including the API version, e.g. `https://api.mistral.ai/v1`. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** One deadline for the whole call, retries and their waits included. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt, on 429, 5xx and network errors only. */
  readonly maxRetries?: number;
  /** First backoff step when the server gives no `Retry-After`. */
  readonly retryBaseMs?: number;
  /** Cap on any one wait, `Retry-After` included. */
  readonly maxRetryDelayMs?: number;
  readonly fetch?: typeof fetch;
}

/**
 * Reads a 2xx answer as it streams; `stop` aborts this attempt's request (the server sees the connection close),
 * for a reader that has what it needs before the end (ADR 0057).
 */
export type StreamRead<T> = (response: Response, stop: () => void) => Promise<T>;

/**
 * POSTs a JSON body to one endpoint and parses the 2xx answer with `parse` (or reads it with `read`, as it
 * streams); throws the MODEL_* codes.
 */
export type JsonPost = <T>(
  body: string,
  parse: (text: string) => T,
  signal?: AbortSignal,
  read?: StreamRead<T>,
) => Promise<T>;

type Attempt<T> = { reply: T } | { retry: CodecallError; retryAfterMs?: number };

/**
 * The HTTP side of a provider call: one deadline over all attempts, retries with backoff (or `Retry-After`) on
 * 429, 5xx and network errors, 401/403 as MODEL_AUTH, other refusals as MODEL_REQUEST_INVALID (with a hint for a
 * 404), the caller's abort as ABORTED. A call's `parse` turns a 2xx body into its reply (MODEL_BAD_REPLY when
 * it cannot). `refusalHint` may add a word to a 4xx refusal (a server known to lack a feature).
 */
export function createJsonPost(
  options: ProviderHttpOptions,
  path: string,
  refusalHint?: (status: number, message: string) => string | undefined,
): JsonPost {
  if (options.baseUrl.trim() === '') throw invalidConfig('the model base URL is empty');
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const maxRetries = options.maxRetries ?? DEFAULT_MODEL_MAX_RETRIES;
  if (!(timeoutMs > 0)) throw invalidConfig('timeoutMs must be positive');
  if (!Number.isInteger(maxRetries) || maxRetries < 0)
    throw invalidConfig('maxRetries must be an integer >= 0');
  const cfg = {
    url: `${options.baseUrl.replace(/\/+$/, '')}${path}`,
    headers: headersFor(options.apiKey),
    timeoutMs,
    maxRetries,
    retryBaseMs: options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
    fetch: options.fetch ?? globalThis.fetch,
  };

  async function attemptOnce<T>(
    body: string,
    parse: (text: string) => T,
    signal: AbortSignal,
    stopped: () => CodecallError,
    read: StreamRead<T> | undefined,
  ): Promise<Attempt<T>> {
    let response: Response;
    let text: string;
    // This attempt's own stop, for a reader that ends the reply early; the caller's and the deadline's go with it.
    const own = new AbortController();
    try {
      response = await cfg.fetch(cfg.url, {
        method: 'POST',
        headers: cfg.headers,
        body,
        signal: AbortSignal.any([signal, own.signal]),
      });
      if (response.ok && read !== undefined) return { reply: await read(response, () => own.abort()) };
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw stopped();
      if (error instanceof CodecallError) throw error;
      return { retry: unavailable(`cannot reach the model server at ${cfg.url}: ${describe(error)}`, error) };
    }
    if (response.ok) return { reply: parse(text) };
    const status = response.status;
    const message = providerErrorMessage(text);
    const details = { status, url: cfg.url, message };
    if (status === 401 || status === 403) {
      throw new CodecallError(
        'MODEL_AUTH',
        `the model server refused the credentials (${status}): ${message}`,
        {
          details,
        },
      );
    }
    if (status === 429 || status >= 500) {
      const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'), cfg.maxRetryDelayMs);
      const retry = new CodecallError(
        'MODEL_UNAVAILABLE',
        `the model server answered ${status}: ${message}`,
        {
          details,
        },
      );
      return retryAfterMs === undefined ? { retry } : { retry, retryAfterMs };
    }
    if (status === 404) {
      // Most often the base URL misses its API version (`.../v1`), or points at another server altogether.
      throw new CodecallError(
        'MODEL_REQUEST_INVALID',
        `the model server answered 404 (not found) to POST ${cfg.url}${message === '' ? '' : `: ${message}`}; ` +
          notFoundHint(options.baseUrl),
        { details },
      );
    }
    const hint = refusalHint?.(status, message);
    throw new CodecallError(
      'MODEL_REQUEST_INVALID',
      `the model server rejected the request (${status}): ${message}${hint === undefined ? '' : `; ${hint}`}`,
      {
        details,
      },
    );
  }

  return async function post<T>(
    body: string,
    parse: (text: string) => T,
    caller?: AbortSignal,
    read?: StreamRead<T>,
  ): Promise<T> {
    if (caller?.aborted) throw aborted(caller.reason);
    // Released when the call ends: left to fire, every finished call would hold its timer, signal and closure for
    // the whole timeout (a minute of calls, at hundreds a second when scoring a corpus), and the caller's long-lived
    // signal (a task's, a corpus's) a dependent per request.
    const { signal, release } = deadlineSignal(cfg.timeoutMs, caller);
    const stopped = (): CodecallError =>
      caller?.aborted
        ? aborted(caller.reason)
        : unavailable(`the model did not answer within ${cfg.timeoutMs} ms`, undefined, {
            timeoutMs: cfg.timeoutMs,
          });
    try {
      for (let attempt = 0; ; attempt++) {
        const outcome = await attemptOnce(body, parse, signal, stopped, read);
        if ('reply' in outcome) return outcome.reply;
        if (attempt >= cfg.maxRetries) {
          Object.assign(outcome.retry.details, { attempts: attempt + 1 });
          throw outcome.retry;
        }
        const delay = outcome.retryAfterMs ?? backoffDelayMs(attempt, cfg.retryBaseMs, cfg.maxRetryDelayMs);
        try {
          await sleep(delay, signal);
        } catch {
          throw stopped();
        }
      }
    } finally {
      release();
    }
  };
}

/** What a 404 from the provider's URL most likely means. */
function notFoundHint(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  let path = '';
  try {
    path = new URL(base).pathname;
  } catch {
    // Not a URL: fetch would have failed before any answer.
  }
  return /\/v\d+$/.test(path)
    ? `check the base URL ${base} (the server's own, with its /v1) and the model name: some servers answer 404 for a model they do not serve`
    : `the base URL usually ends in /v1: try ${base}/v1 (e.g. http://127.0.0.1:8080/v1 for llama.cpp's llama-server)`;
}

function headersFor(apiKey: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey !== undefined && apiKey !== '') headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

function describe(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

function unavailable(message: string, cause?: unknown, details: Record<string, unknown> = {}): CodecallError {
  return new CodecallError('MODEL_UNAVAILABLE', message, { cause, details });
}

function aborted(reason: unknown): CodecallError {
  return new CodecallError('ABORTED', 'the model request was aborted', { cause: reason });
}

export function invalidConfig(message: string): CodecallError {
  return new CodecallError('INVALID_CONFIG', message);
}
