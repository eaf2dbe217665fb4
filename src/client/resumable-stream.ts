import { CodecallError } from '../errors/index.ts';
import { readSse } from './sse-reader.ts';
import type { SseMessage } from './sse-reader.ts';

/** Reconnects in a row without an event in between before the stream gives up (the caller reads the task). */
export const STREAM_RECONNECTS = 5;
const BACKOFF_MS = 250;

export interface ResumableOptions {
  readonly signal?: AbortSignal | undefined;
  /** Whether the server ends the stream by design once it sent this message (the task ended): a clean end after
   * it is not reconnected. */
  readonly final: (message: SseMessage) => boolean;
}

/**
 * The messages of an SSE stream that is reopened, with `Last-Event-ID`, when it drops (the server went away, or
 * ended it for reading too slowly) before its final message: the server sends what came after that id, so
 * nothing is lost or repeated. `open` gets the id to resume after (undefined the first time). Failures to
 * reconnect that are not transient (an error answer other than 429, say a revoked key) are thrown.
 */
export async function* resumableSse(
  open: (lastEventId: string | undefined) => Promise<Response>,
  options: ResumableOptions,
): AsyncGenerator<SseMessage & { readonly resumed: boolean }> {
  const { signal } = options;
  let lastId: string | undefined;
  let resumed = false;
  let attempts = 0;
  let final = false;
  for (;;) {
    let res: Response | null = null;
    try {
      res = await open(lastId);
    } catch (e) {
      if (!resumed || !transient(e) || attempts >= STREAM_RECONNECTS) throw e;
    }
    if (res !== null) {
      if (!res.body) return;
      try {
        for await (const m of readSse(res.body, { ...(signal ? { signal } : {}) })) {
          if (m.id !== undefined) lastId = m.id;
          attempts = 0;
          if (options.final(m)) final = true;
          yield { ...m, resumed };
        }
        if (final) return;
      } catch (e) {
        // A dropped connection is resumed; anything else (a bad event, the caller's abort) is the caller's.
        if (signal?.aborted || e instanceof CodecallError) throw e;
      }
    }
    if (signal?.aborted || lastId === undefined || attempts >= STREAM_RECONNECTS) return;
    attempts += 1;
    resumed = true;
    await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS * attempts));
  }
}

function transient(e: unknown): boolean {
  return e instanceof CodecallError && (e.code === 'SERVICE_UNREACHABLE' || e.code === 'TOO_MANY_STREAMS');
}
