import { CodecallError, isErrorCode } from '../errors/index.ts';
import type { ErrorCode } from '../errors/index.ts';
import type {
  CallOptions,
  ClientOptions,
  CodecallClient,
  EventPage,
  StreamEvent,
  SubmitReply,
  TaskEvent,
  TaskPage,
} from './client-types.ts';
import { resumableSse } from './resumable-stream.ts';
import type { SseMessage } from './sse-reader.ts';
import { isTerminal } from '../spec/index.ts';
import type { TaskView } from '../api/index.ts';

const API = '/api/v1';

/**
 * A typed client of the task API. Every failure is a CodecallError: the server's error envelope keeps its code
 * (with `details.http_status`), an unreachable server is SERVICE_UNREACHABLE.
 */
/** What a service's address looks like: `codecall serve` listens on port 8484 unless told otherwise. */
const URL_EXAMPLE = 'a service address such as http://127.0.0.1:8484';

export function createClient(options: ClientOptions): CodecallClient {
  let base: URL;
  try {
    base = new URL(options.url);
  } catch {
    throw new CodecallError('INVALID_ARGUMENT', `not a URL: ${options.url} (${URL_EXAMPLE})`, {
      details: { field: 'url' },
    });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new CodecallError('INVALID_ARGUMENT', `the URL must be http(s): ${options.url} (${URL_EXAMPLE})`, {
      details: { field: 'url' },
    });
  }
  const root = base.href.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;

  async function send(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await doFetch(`${root}${API}${path}`, {
        method,
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        ...(init.signal ? { signal: init.signal } : {}),
      });
    } catch (e) {
      if (init.signal?.aborted) throw new CodecallError('ABORTED', 'the request was aborted', { cause: e });
      const cause = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
      throw new CodecallError('SERVICE_UNREACHABLE', `cannot reach ${root}: ${cause}`, { cause: e });
    }
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  async function json<T>(method: string, path: string, init: Parameters<typeof send>[2] = {}): Promise<T> {
    const res = await send(method, path, init);
    return (await res.json()) as T;
  }

  const task = (id: string): string => `/tasks/${encodeURIComponent(id)}`;

  return {
    submit(request, opts = {}) {
      const headers: Record<string, string> =
        opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey };
      return json<SubmitReply>('POST', '/tasks', { body: request, headers, signal: opts.signal });
    },
    revise(taskId, request, opts = {}) {
      const headers: Record<string, string> =
        opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey };
      const { code, rerun_reads } = request;
      const body = { code, ...(rerun_reads === undefined ? {} : { rerun_reads }) };
      return json<TaskView>('POST', `${task(taskId)}/revise`, { body, headers, signal: opts.signal });
    },
    get(taskId, opts: CallOptions = {}) {
      return json<TaskView>('GET', task(taskId), { signal: opts.signal });
    },
    list(filter = {}, opts = {}) {
      const q = new URLSearchParams();
      if (filter.status !== undefined) q.set('status', filter.status);
      if (filter.sessionId !== undefined) q.set('session_id', filter.sessionId);
      if (filter.limit !== undefined) q.set('limit', String(filter.limit));
      if (filter.cursor !== undefined) q.set('cursor', filter.cursor);
      const query = q.toString() === '' ? '' : `?${q.toString()}`;
      return json<TaskPage>('GET', `/tasks${query}`, { signal: opts.signal });
    },
    control(taskId, request, opts = {}) {
      return json<TaskView>('POST', `${task(taskId)}/control`, { body: request, signal: opts.signal });
    },
    decide(taskId, approvalId, request, opts = {}) {
      const path = `${task(taskId)}/approvals/${encodeURIComponent(approvalId)}`;
      return json<TaskView>('POST', path, { body: request, signal: opts.signal });
    },
    input(taskId, request, opts = {}) {
      return json<TaskView>('POST', `${task(taskId)}/input`, { body: request, signal: opts.signal });
    },
    resolveAttention(taskId, request, opts = {}) {
      return json<TaskView>('POST', `${task(taskId)}/attention`, { body: request, signal: opts.signal });
    },
    events(taskId, page = {}, opts = {}) {
      const q = new URLSearchParams();
      if (page.after !== undefined) q.set('after', String(page.after));
      if (page.limit !== undefined) q.set('limit', String(page.limit));
      const query = q.toString() === '' ? '' : `?${q.toString()}`;
      return json<EventPage>('GET', `${task(taskId)}/events${query}`, { signal: opts.signal });
    },
    async *stream(taskId, opts = {}) {
      const open = (lastEventId: string | undefined): Promise<Response> =>
        send('GET', `${task(taskId)}/stream`, {
          headers: {
            accept: 'text/event-stream',
            ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
          },
          signal: opts.signal,
        });
      // A dropped stream is resumed after its last event id. The view the server sends first on a resume is a
      // status change to the caller (the first view was the start); one of the task's end is held back until the
      // entries after the id came, so the end is the last event, as on a stream that never dropped.
      let end: StreamEvent | null = null;
      for await (const m of resumableSse(open, { signal: opts.signal, final: endsStream })) {
        const event = toStreamEvent(m.event, m.data);
        if (event?.type === 'view' && m.resumed) {
          const status: StreamEvent = { type: 'status', view: event.view };
          if (isTerminal(event.view.status)) end = status;
          else yield status;
        } else if (event) yield event;
      }
      if (end) yield end;
    },
  };
}

/** The server ends a task's stream after a view of its end. */
function endsStream(m: SseMessage): boolean {
  if (m.event !== 'view' && m.event !== 'status') return false;
  try {
    return isTerminal((JSON.parse(m.data) as TaskView).status);
  } catch {
    return false;
  }
}

/** Unknown event names are skipped: a newer server may send more kinds. */
function toStreamEvent(name: string, data: string): StreamEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new CodecallError('INTERNAL', `the stream sent a ${name} event that is not JSON`);
  }
  switch (name) {
    case 'view':
    case 'status':
      return { type: name, view: parsed as TaskView };
    case 'log': {
      const log = parsed as { level: Extract<StreamEvent, { type: 'log' }>['level']; message: string };
      return { type: 'log', level: log.level, message: log.message };
    }
    case 'journal':
      return { type: 'journal', entries: parsed as TaskEvent[] };
    case 'error': {
      // The server ended the stream for a reason of its own (the key was revoked): not resumed.
      const e = (parsed as { error?: { code?: string; message?: string } }).error;
      const code: ErrorCode = e?.code !== undefined && isErrorCode(e.code) ? e.code : 'INTERNAL';
      throw new CodecallError(code, e?.message ?? 'the stream ended with an error');
    }
    default:
      return null;
  }
}

/** The server's `{ error: { code, message, details } }`, or a code from the status for any other body. */
async function errorOf(res: Response): Promise<CodecallError> {
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not the envelope (a proxy's page, say).
  }
  const e = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const serverCode = typeof e?.code === 'string' ? e.code : null;
  const details = {
    ...(e?.details !== null && typeof e?.details === 'object' ? (e.details as Record<string, unknown>) : {}),
    http_status: res.status,
    // Not a codecall service's answer (another server's page): the caller may say the URL is wrong.
    ...(e === undefined ? { envelope: false } : {}),
    // A code this client does not know yet (a newer server) is kept for the caller to show.
    ...(serverCode !== null && !isErrorCode(serverCode) ? { server_code: serverCode } : {}),
  };
  const code: ErrorCode =
    serverCode !== null && isErrorCode(serverCode) ? serverCode : codeOfStatus(res.status);
  const message = typeof e?.message === 'string' ? e.message : `HTTP ${res.status} ${res.statusText}`.trim();
  return new CodecallError(code, message, { details });
}

function codeOfStatus(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 413) return 'PAYLOAD_TOO_LARGE';
  if (status === 503) return 'SERVICE_UNREACHABLE';
  return status < 500 ? 'BAD_REQUEST' : 'INTERNAL';
}
