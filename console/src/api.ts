import { readSse } from './sse.ts';
import type {
  CorruptItem,
  InboxItem,
  Me,
  Overview,
  TaskEvent,
  TaskList,
  TaskView,
  ToolItem,
} from './types.ts';

/** An answer of the API's error envelope (or a failure to reach it), with its stable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Query = Readonly<Record<string, string | undefined>>;

function withQuery(path: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string; details?: object } };
    return new ApiError(
      res.status,
      error.code,
      error.message,
      (error.details ?? {}) as Record<string, unknown>,
    );
  } catch {
    return new ApiError(res.status, 'HTTP_ERROR', `${res.status} ${res.statusText} ${text.slice(0, 200)}`);
  }
}

/** The task API with one key: every request carries `Authorization: Bearer` (the console's only credential). */
export class Api {
  constructor(readonly key: string) {}

  private async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.key}`);
    let res: Response;
    try {
      res = await fetch(path, { ...init, headers });
    } catch (e) {
      if (init.signal?.aborted) throw e;
      throw new ApiError(0, 'SERVICE_UNREACHABLE', `the service did not answer: ${String(e)}`);
    }
    if (!res.ok) throw await failure(res);
    return res;
  }

  private async json<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    const res = await this.fetch(path, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      ...(signal ? { signal } : {}),
    });
    return (await res.json()) as T;
  }

  me(): Promise<Me> {
    return this.json('GET', '/api/v1/me');
  }

  /** The tools programs on this server may call. */
  tools(signal?: AbortSignal): Promise<{ tools: ToolItem[] }> {
    return this.json('GET', '/api/v1/tools', undefined, signal);
  }

  /**
   * The newest tasks (one page of up to 1000), for the filters given; older ones by search. A list item's fields
   * over 4 KiB (code, metadata, arguments...) are summarised (`truncated`): the detail reads the task. Tasks the store
   * cannot read are not among them but in `corrupt`.
   */
  async tasks(filter: Query): Promise<{ tasks: TaskView[]; corrupt: CorruptItem[] }> {
    const out: TaskView[] = [];
    const corrupt: CorruptItem[] = [];
    for (let cursor: string | undefined; out.length < 1000;) {
      const page = await this.json<TaskList>(
        'GET',
        withQuery('/api/v1/tasks', { ...filter, order: 'newest', limit: '1000', cursor }),
      );
      out.push(...page.tasks);
      corrupt.push(...(page.corrupt ?? []));
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
    return { tasks: out, corrupt };
  }

  task(id: string, signal?: AbortSignal): Promise<TaskView> {
    return this.json('GET', `/api/v1/tasks/${encodeURIComponent(id)}`, undefined, signal);
  }

  /** The journal and audit log, every page. */
  async events(id: string, signal?: AbortSignal): Promise<TaskEvent[]> {
    const out: TaskEvent[] = [];
    for (let after: string | undefined; ;) {
      const page = await this.json<{ events: TaskEvent[]; next_after: string | null }>(
        'GET',
        withQuery(`/api/v1/tasks/${encodeURIComponent(id)}/events`, { after, limit: '1000' }),
        undefined,
        signal,
      );
      out.push(...page.events);
      if (page.next_after === null) return out;
      after = page.next_after;
    }
  }

  approvals(
    signal?: AbortSignal,
  ): Promise<{ approvals: InboxItem[]; corrupt?: CorruptItem[]; next_cursor?: string | null }> {
    return this.json('GET', '/api/v1/approvals', undefined, signal);
  }

  /** The operator's view over the last `windowSeconds` (the key's tenant; an admin key's: every tenant). */
  overview(windowSeconds: number, signal?: AbortSignal): Promise<Overview> {
    return this.json(
      'GET',
      withQuery('/api/v1/stats/overview', { window: String(windowSeconds) }),
      undefined,
      signal,
    );
  }

  control(id: string, action: 'pause' | 'resume' | 'cancel'): Promise<TaskView> {
    return this.json('POST', `/api/v1/tasks/${encodeURIComponent(id)}/control`, { action });
  }

  decide(
    id: string,
    body: { decision: 'approve' | 'reject'; reason?: string; approval_ids?: string[] },
  ): Promise<TaskView> {
    return this.json('POST', `/api/v1/tasks/${encodeURIComponent(id)}/approvals`, body);
  }

  provideInput(id: string, name: string, value: unknown): Promise<TaskView> {
    return this.json('POST', `/api/v1/tasks/${encodeURIComponent(id)}/input`, { name, value });
  }

  resolveAttention(
    id: string,
    body: { action: 'retry' | 'skip' | 'fail'; result?: unknown; reason?: string },
  ): Promise<TaskView> {
    return this.json('POST', `/api/v1/tasks/${encodeURIComponent(id)}/attention`, body);
  }

  /** A new task that runs `code` as a revision of the ended task `id`, taking over the calls it completed. */
  revise(id: string, body: { code: string; rerun_reads?: boolean }): Promise<TaskView> {
    return this.json('POST', `/api/v1/tasks/${encodeURIComponent(id)}/revise`, body);
  }

  submit(body: Record<string, unknown>): Promise<{ task_id: string }> {
    return this.json('POST', '/api/v1/tasks', body);
  }

  /** An artifact's bytes (downloads need the key, so they go through fetch, not a plain link). */
  async artifact(id: string, name: string): Promise<Blob> {
    const res = await this.fetch(
      `/api/v1/tasks/${encodeURIComponent(id)}/artifacts/${encodeURIComponent(name)}`,
    );
    return res.blob();
  }

  /**
   * Server-Sent Events read with fetch (EventSource cannot send the key), until the signal aborts or the
   * server ends the stream; `onEvent` gets each event's name and parsed data.
   */
  async stream(
    path: string,
    onEvent: (event: string, data: unknown) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const res = await this.fetch(path, { signal, headers: { accept: 'text/event-stream' } });
    if (!res.body) return;
    for await (const m of readSse(res.body)) {
      let data: unknown = m.data;
      try {
        data = JSON.parse(m.data) as unknown;
      } catch {
        // Not JSON: passed on as text.
      }
      onEvent(m.event, data);
    }
  }
}
