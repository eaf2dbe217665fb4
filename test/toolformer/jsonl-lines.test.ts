import { describe, expect, it } from 'vitest';
import { lines } from '../../src/toolformer/index.ts';

async function* chunksOf(...parts: (string | Uint8Array)[]): AsyncGenerator<string | Uint8Array> {
  for (const part of parts) yield await Promise.resolve(part);
}

async function all(source: AsyncIterable<{ line: string; number: number }>): Promise<[number, string][]> {
  const out: [number, string][] = [];
  for await (const { line, number } of source) out.push([number, line]);
  return out;
}

describe('corpus lines', () => {
  it('joins lines split across chunks, characters split across bytes, and drops empty lines and \\r', async () => {
    const bytes = new TextEncoder().encode('é📈\r\n');
    const got = await all(
      lines(chunksOf('{"a":', '1}\n\n  \nsecond', ' line\n', bytes.slice(0, 3), bytes.slice(3), 'last')),
    );
    expect(got).toEqual([
      [1, '{"a":1}'],
      [4, 'second line'],
      [5, 'é📈'],
      [6, 'last'],
    ]);
  });

  it('refuses a line over the limit, naming it, without reading the rest of the stream', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<string> {
      yield 'ok\n';
      for (;;) {
        pulled++;
        yield await Promise.resolve('x'.repeat(1000));
      }
    }
    const read: string[] = [];
    await expect(
      (async () => {
        for await (const { line } of lines(endless(), 10_000)) read.push(line);
      })(),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('line 2') as unknown,
    });
    expect(read).toEqual(['ok']);
    expect(pulled).toBeLessThanOrEqual(11);
  });
});
