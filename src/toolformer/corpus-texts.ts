import { isRecord } from '../spec/is-record.ts';

/** A corpus line as a text, or why it is not one. */
export type CorpusText =
  { readonly number: number; readonly text: string } | { readonly number: number; readonly bad: string };

/**
 * The texts of a corpus read as lines: a JSONL corpus (`jsonl`) holds one `{"text": "..."}` a line, a plain one
 * (`text`) one text a line. A JSONL line without a text is `bad` (counted, never guessed at).
 */
export async function* corpusTexts(
  lines: AsyncIterable<{ readonly line: string; readonly number: number }>,
  format: 'jsonl' | 'text',
): AsyncGenerator<CorpusText> {
  for await (const { line, number } of lines) {
    if (format === 'text') {
      yield { number, text: line };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      yield { number, bad: 'not JSON' };
      continue;
    }
    if (!isRecord(value) || typeof value.text !== 'string' || value.text.trim() === '') {
      yield { number, bad: 'no "text"' };
      continue;
    }
    yield { number, text: value.text };
  }
}

/** The format a corpus file is read in: JSONL for `.jsonl`/`.ndjson`, else one text a line. */
export function corpusFormatOf(path: string): 'jsonl' | 'text' {
  return /\.(jsonl|ndjson)$/i.test(path) ? 'jsonl' : 'text';
}
