/**
 * One Server-Sent Event: its `event:` name (default `message`), its `data:` lines joined and the last event id
 * (the latest `id:` of this stream, when there was one: what to send as `Last-Event-ID` to resume after it).
 */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/**
 * Parses a text/event-stream body as it arrives. Comments (`: keep-alive`) and `retry:` fields are skipped;
 * a message is dispatched at its blank line, so a half-received one at the end of the body is dropped.
 * Stopping the iteration (or the signal) cancels the body.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<SseMessage> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const onAbort = (): void => void reader.cancel().catch(() => undefined);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A lone \r at the end may be half of a \r\n split across chunks.
        if (buffer[nl] === '\r' && nl === buffer.length - 1) break;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) {
            yield { event: event || 'message', data: data.join('\n'), ...(id === '' ? {} : { id }) };
          }
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? '' : line.slice(colon + 1);
        const text = raw.startsWith(' ') ? raw.slice(1) : raw;
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
        // As EventSource: an id with a NUL is ignored; it holds for the events after it until the next one.
        else if (field === 'id' && !text.includes('\0')) id = text;
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    // Also when the consumer stops early: cancelling the body closes the connection.
    await reader.cancel().catch(() => undefined);
  }
}
