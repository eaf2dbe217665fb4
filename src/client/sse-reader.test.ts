import { describe, expect, it } from 'vitest';
import { readSse } from './sse-reader.ts';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
}

async function all(chunks: string[]) {
  const out = [];
  for await (const m of readSse(body(chunks))) out.push(m);
  return out;
}

describe('readSse', () => {
  it('parses events split anywhere across chunks, with CRLF, comments and multi-line data', async () => {
    const text =
      'event: view\ndata: {"a":1}\n\n: keep-alive\n\nevent: log\r\ndata: one\r\ndata:two\r\n\r\ndata: x\n\n';
    const expected = [
      { event: 'view', data: '{"a":1}' },
      { event: 'log', data: 'one\ntwo' },
      { event: 'message', data: 'x' },
    ];
    expect(await all([text])).toEqual(expected);
    // Every split point, including inside a \r\n and inside a multi-byte character.
    for (let i = 1; i < text.length; i++)
      expect(await all([text.slice(0, i), text.slice(i)])).toEqual(expected);
    expect(await all(['data: é', 't\n\n'])).toEqual([{ event: 'message', data: 'ét' }]);
  });

  it('drops a message cut off by the end of the body', async () => {
    expect(await all(['event: status\ndata: {"half"'])).toEqual([]);
  });

  it('gives each message the last id the stream sent, as EventSource keeps it for Last-Event-ID', async () => {
    const text = 'id: 3\nevent: a\ndata: 1\n\nevent: b\ndata: 2\n\nid: 7\ndata: 3\n\nid: x\0y\ndata: 4\n\n';
    expect(await all([text])).toEqual([
      { event: 'a', data: '1', id: '3' },
      { event: 'b', data: '2', id: '3' },
      { event: 'message', data: '3', id: '7' },
      { event: 'message', data: '4', id: '7' },
    ]);
  });
});
