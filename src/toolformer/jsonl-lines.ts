import { CodecallError } from '../errors/index.ts';

/** A corpus line longer than this is refused: a line is one text, and one without an end must not fill memory. */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

/**
 * The lines of a stream of bytes, one at a time, never holding more than one line (and the chunk it is in):
 * a corpus is read without being loaded whole. Empty lines and a final `\r` are dropped. A line over
 * `maxLineBytes` is INVALID_ARGUMENT naming its number.
 */
export async function* lines(
  chunks: AsyncIterable<Uint8Array | string>,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): AsyncGenerator<{ readonly line: string; readonly number: number }> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let partial = '';
  let number = 0;
  const tooLong = (): CodecallError =>
    new CodecallError('INVALID_ARGUMENT', `line ${number + 1} of the corpus is over ${maxLineBytes} bytes`, {
      details: { line: number + 1 },
    });
  for await (const chunk of chunks) {
    partial += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    // Walk the chunk's lines by index: slicing the rest off after each would copy it once per line.
    let from = 0;
    for (let newline = partial.indexOf('\n'); newline >= 0; newline = partial.indexOf('\n', from)) {
      const line = partial.slice(from, newline).replace(/\r$/, '');
      from = newline + 1;
      if (Buffer.byteLength(line) > maxLineBytes) throw tooLong();
      number++;
      if (line.trim() !== '') yield { line, number };
    }
    partial = partial.slice(from);
    // UTF-16 units are at most 3 bytes of UTF-8 each: a cheap bound before measuring.
    if (partial.length > maxLineBytes && Buffer.byteLength(partial) > maxLineBytes) throw tooLong();
  }
  partial += decoder.decode();
  const last = partial.replace(/\r$/, '');
  if (Buffer.byteLength(last) > maxLineBytes) throw tooLong();
  number++;
  if (last.trim() !== '') yield { line: last, number };
}
