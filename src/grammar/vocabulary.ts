import { CodecallError } from '../errors/index.ts';

/**
 * A tokenizer's vocabulary as the token masks see it (issue 23): for each token id, the bytes it stands for. The
 * matcher works on bytes, so a vocabulary from any tokenizer family reduces to this.
 */
export interface Vocabulary {
  /** One past the largest token id. */
  readonly size: number;
  /** The bytes token `id` stands for, or null for a special token (begin or end of text, a control token). */
  bytes(id: number): Uint8Array | null;
  /** The ids that end a sequence (`<|eot_id|>`, `</s>`, ...): allowed where the grammar may end. */
  readonly eos: readonly number[];
}

/** How a family writes its tokens: GPT-2's byte-level alphabet (Llama 3, GPT) or SentencePiece's (Llama 2, Mistral). */
export type TokenEncoding = 'byte-level' | 'sentencepiece';

/** Names the end of a sequence in the common families, when the caller does not say which. */
const EOS_NAMES = [
  '</s>',
  '<|end_of_text|>',
  '<|eot_id|>',
  '<|endoftext|>',
  '<|im_end|>',
  '<|eom_id|>',
  '<eos>',
];

function invalid(message: string, details: Record<string, unknown> = {}): never {
  throw new CodecallError('INVALID_ARGUMENT', `tokenizer: ${message}`, { details });
}

/** GPT-2's byte-to-character table, inverted: the character that stands for a byte in a byte-level token. */
const BYTE_OF_CHAR: ReadonlyMap<number, number> = (() => {
  const map = new Map<number, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    map.set(printable ? b : 256 + extra++, b);
  }
  return map;
})();

const encoder = new TextEncoder();
const SPACE_PIECE = '\u2581';
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;
const CONTROL_PIECES = new Set(['<unk>', '<s>', '</s>', '<pad>']);

function byteLevelBytes(piece: string): Uint8Array | null {
  const out = new Uint8Array(piece.length);
  let n = 0;
  for (const ch of piece) {
    const b = BYTE_OF_CHAR.get(ch.codePointAt(0) ?? -1);
    if (b === undefined) return null;
    out[n++] = b;
  }
  return out.subarray(0, n);
}

function sentencePieceBytes(piece: string): Uint8Array {
  const byte = BYTE_PIECE.exec(piece);
  if (byte) return Uint8Array.of(parseInt(byte[1] ?? '0', 16));
  return encoder.encode(piece.replaceAll(SPACE_PIECE, ' '));
}

/** The bytes of every token in one buffer, found by offsets (a 128k vocabulary takes about 1 MB). */
class PackedVocabulary implements Vocabulary {
  readonly size: number;
  readonly eos: readonly number[];
  readonly #offsets: Uint32Array;
  readonly #data: Uint8Array;
  readonly #special: Uint8Array;

  constructor(tokens: readonly (Uint8Array | null | undefined)[], eos: readonly number[]) {
    this.size = tokens.length;
    this.eos = eos;
    this.#offsets = new Uint32Array(tokens.length + 1);
    this.#special = new Uint8Array(tokens.length);
    let total = 0;
    tokens.forEach((t, id) => {
      if (t === null || t === undefined) this.#special[id] = 1;
      else total += t.length;
    });
    this.#data = new Uint8Array(total);
    let at = 0;
    tokens.forEach((t, id) => {
      this.#offsets[id] = at;
      if (t) {
        this.#data.set(t, at);
        at += t.length;
      }
    });
    this.#offsets[tokens.length] = at;
  }

  bytes(id: number): Uint8Array | null {
    if (!Number.isInteger(id) || id < 0 || id >= this.size || this.#special[id] === 1) return null;
    return this.#data.subarray(this.#offsets[id], this.#offsets[id + 1]);
  }
}

/**
 * A vocabulary from token strings by id (`mistral-tokenizer-js`'s `vocabById`, a `vocab.json` inverted). `special`
 * ids stand for no bytes; `eos` defaults to the special tokens named as an end in the common families.
 */
export function vocabularyFromPieces(
  pieces: readonly (string | undefined)[],
  options: { encoding: TokenEncoding; special?: Iterable<number>; eos?: readonly number[] },
): Vocabulary {
  const special = new Set(options.special ?? []);
  if (options.encoding === 'sentencepiece') {
    // SentencePiece's control pieces are never text.
    pieces.forEach((p, id) => {
      if (p !== undefined && CONTROL_PIECES.has(p)) special.add(id);
    });
  }
  const tokens = pieces.map((piece, id) => {
    if (piece === undefined || special.has(id)) return null;
    if (options.encoding === 'sentencepiece') return sentencePieceBytes(piece);
    const bytes = byteLevelBytes(piece);
    if (bytes === null)
      invalid(`token ${id} (${JSON.stringify(piece)}) is not in the byte-level alphabet`, { id });
    return bytes;
  });
  const eos =
    options.eos ??
    pieces.flatMap((p, id) => (p !== undefined && special.has(id) && EOS_NAMES.includes(p) ? [id] : []));
  for (const id of eos) {
    if (!Number.isInteger(id) || id < 0 || id >= tokens.length)
      invalid(`end-of-sequence id ${id} is not a token`);
  }
  return new PackedVocabulary(tokens, eos);
}

interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Which alphabet a Hugging Face tokenizer.json writes its tokens in: its decoder says. */
function encodingOf(json: Record<string, unknown>): TokenEncoding {
  const model = json.model as Record<string, unknown>;
  const decoders = (d: unknown): string[] =>
    !isRecord(d) ? [] : [String(d.type), ...(Array.isArray(d.decoders) ? d.decoders.flatMap(decoders) : [])];
  const types = decoders(json.decoder);
  if (types.includes('ByteLevel')) return 'byte-level';
  if (types.includes('ByteFallback') || types.includes('Metaspace') || model.byte_fallback === true) {
    return 'sentencepiece';
  }
  return invalid('only byte-level BPE and SentencePiece-style vocabularies are read', { decoders: types });
}

/**
 * A vocabulary from a Hugging Face `tokenizer.json` (its parsed JSON): the model's `vocab` (BPE, or a Unigram's
 * `[piece, score]` list) and its `added_tokens`, special ones standing for no bytes. `eos` names the tokens that end
 * a sequence (default: the special tokens the common families use).
 */
export function vocabularyFromTokenizerJson(
  json: unknown,
  options: { eos?: readonly string[] } = {},
): Vocabulary {
  if (!isRecord(json) || !isRecord(json.model)) invalid('not a tokenizer.json (no "model")');
  const model = json.model;
  const pieces: (string | undefined)[] = [];
  if (isRecord(model.vocab)) {
    for (const [piece, id] of Object.entries(model.vocab)) {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 10_000_000) {
        invalid(`vocab entry ${JSON.stringify(piece)} has no valid id`);
      }
      pieces[id] = piece;
    }
  } else if (Array.isArray(model.vocab)) {
    model.vocab.forEach((entry: unknown, id) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string')
        invalid(`vocab entry ${id} is not [piece, score]`);
      pieces[id] = entry[0];
    });
  } else {
    invalid('the model has no vocab');
  }
  const added = Array.isArray(json.added_tokens) ? (json.added_tokens as unknown[]) : [];
  const special: number[] = [];
  const names = new Map<string, number>();
  for (const token of added) {
    if (!isRecord(token) || typeof token.id !== 'number' || typeof token.content !== 'string') {
      invalid('an added token has no id or content');
    }
    const t = token as unknown as AddedToken;
    pieces[t.id] = t.content;
    names.set(t.content, t.id);
    if (t.special === true) special.push(t.id);
  }
  const eosNames = options.eos ?? EOS_NAMES;
  const eos = eosNames.flatMap((n) => (names.has(n) ? [names.get(n) as number] : []));
  if (options.eos !== undefined && eos.length !== options.eos.length) {
    invalid(`no token named ${options.eos.filter((n) => !names.has(n)).join(', ')}`);
  }
  const encoding = encodingOf(json);
  // An added token that is not special is text, written as itself (not in the model's alphabet).
  const text = new Map<number, string>();
  for (const token of added as AddedToken[]) if (token.special !== true) text.set(token.id, token.content);
  const vocabulary = vocabularyFromPieces(
    pieces.map((p, id) => (text.has(id) ? undefined : p)),
    { encoding, special, eos },
  );
  if (text.size === 0) return vocabulary;
  const tokens = Array.from({ length: vocabulary.size }, (_, id) =>
    text.has(id) ? encoder.encode(text.get(id)) : vocabulary.bytes(id),
  );
  return new PackedVocabulary(tokens, eos);
}
