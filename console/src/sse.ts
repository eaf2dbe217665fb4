/** One Server-Sent Event: its name (default `message`) and its data lines joined. */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
}

/**
 * Parses a text/event-stream body as it arrives (the browser twin of src/client/sse-reader.ts, on a plain
 * TextDecoder). Comments (heartbeats) and id/retry fields are skipped; an event counts at its blank line.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A lone \r at the end may be half of a \r\n split across chunks.
        if (buffer[nl] === '\r' && nl === buffer.length - 1) break;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const raw = colon < 0 ? '' : line.slice(colon + 1);
          const text = raw.startsWith(' ') ? raw.slice(1) : raw;
          if (field === 'event') event = text;
          else if (field === 'data') data.push(text);
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
