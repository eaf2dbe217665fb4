/**
 * A local decoding loop's step (issue 23, ADR 0057): for whoever runs a model in-process. The state's token mask
 * is applied to the model's logits (a refused token's logit becomes -Infinity), one token is sampled (greedy, or
 * by temperature with the caller's random source), the matcher advances over it, and the bytes the grammar then
 * forces (one choice only, such as a property's name) come back as fast-forward tokens the model need not be run
 * for. Built on the grammar module's public pieces: the matcher, the token trie and its masks.
 */
import { CodecallError } from '../errors/index.ts';
import { GrammarMatcher } from './matcher.ts';
import type { MatcherOptions } from './matcher.ts';
import type { Program } from './program.ts';
import { maskAllows } from './token-trie.ts';
import type { TokenTrie } from './token-trie.ts';
import type { Vocabulary } from './vocabulary.ts';

/** A sequence being decoded under a grammar: the matcher, the vocabulary's trie, and the tokens so far. */
export class ConstrainedState {
  readonly matcher: GrammarMatcher;
  readonly trie: TokenTrie;
  /** Every token taken, sampled and forced, in order. */
  readonly tokens: number[] = [];
  #mask: Uint32Array | null = null;
  #ended = false;

  constructor(program: Program, trie: TokenTrie, options: MatcherOptions = {}) {
    this.matcher = new GrammarMatcher(program, options);
    this.trie = trie;
  }

  /** The sequence ended: an end-of-sequence token was taken, or the value is whole and nothing may follow. */
  get done(): boolean {
    return this.#ended || this.matcher.status() === 'complete';
  }

  /** The tokens allowed next (kept until the state moves). */
  mask(): Uint32Array {
    this.#mask ??= this.trie.mask(this.matcher);
    return this.#mask;
  }

  /** Takes one token (its bytes, or an end of sequence); false, and nothing changes, when the grammar refuses it. */
  accept(token: number): boolean {
    if (this.#ended) return false;
    const vocabulary = this.trie.vocabulary;
    if (vocabulary.eos.includes(token)) {
      if (!this.matcher.isAccepting()) return false;
      this.#ended = true;
      this.tokens.push(token);
      return true;
    }
    const bytes = vocabulary.bytes(token);
    if (bytes === null || bytes.length === 0) return false;
    const taken = this.matcher.consumeBytes(bytes);
    if (taken !== bytes.length) {
      this.matcher.rollback(taken);
      return false;
    }
    this.#mask = null;
    this.tokens.push(token);
    return true;
  }

  /** The bytes the grammar forces from here: while exactly one byte may come and the value could not end. */
  forcedBytes(limit: number): number[] {
    const out: number[] = [];
    while (out.length < limit && !this.matcher.isAccepting()) {
      const set = this.matcher.allowedBytes();
      let only = -1;
      for (let w = 0; w < 8 && only !== -2; w++) {
        const word = set[w] ?? 0;
        if (word === 0) continue;
        if (only !== -1 || (word & (word - 1)) !== 0) only = -2;
        else only = w * 32 + (31 - Math.clz32(word));
      }
      if (only < 0 || !this.matcher.consume(only)) break;
      out.push(only);
    }
    this.matcher.rollback(out.length);
    return out;
  }
}

export interface SampleOptions {
  /** 0 (the default) takes the likeliest allowed token; above 0, samples from the allowed tokens' softmax at it. */
  readonly temperature?: number;
  /** A number in [0, 1) per call, for temperature sampling: `seededRandom(seed)` repeats a run. Default Math.random. */
  readonly random?: () => number;
  /** Take the tokens the grammar forces after the sampled one (default true), at most this many bytes. */
  readonly fastForward?: boolean;
  readonly maxForcedBytes?: number;
  /**
   * Pick from the unmasked logits first and build the mask only when the grammar refuses that pick (default
   * false). The same distribution (greedy: the same token; temperature: rejection sampling, exact), much cheaper
   * where most tokens are allowed (inside strings); `logits` are masked only when the mask was built.
   */
  readonly lazy?: boolean;
}

export interface SampleResult {
  /** The sampled token (an end-of-sequence token when the sequence ends by it). */
  readonly token: number;
  /** Tokens the grammar forced after it (fast-forward): feed them to the model without sampling. */
  readonly forced: readonly number[];
  /** The sequence ended: stop decoding. */
  readonly done: boolean;
}

const DEFAULT_MAX_FORCED_BYTES = 256;

/**
 * One decoding step: masks `logits` in place (every token the grammar refuses gets -Infinity), samples, advances
 * `state` over the token and the fast-forward tokens after it. Throws GRAMMAR_REJECTED when no token may come
 * (the sequence already ended, or the grammar is at a dead end) and INVALID_ARGUMENT for logits shorter than the
 * vocabulary.
 */
export function constrainedSample(
  logits: Float32Array,
  state: ConstrainedState,
  options: SampleOptions = {},
): SampleResult {
  const size = state.trie.vocabulary.size;
  if (logits.length < size) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${logits.length} logits for a vocabulary of ${size} tokens`,
      {
        details: { logits: logits.length, vocabulary: size },
      },
    );
  }
  const temperature = options.temperature ?? 0;
  if (!(temperature >= 0) || !Number.isFinite(temperature)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `temperature must be a finite number >= 0, not ${temperature}`,
    );
  }
  if (state.done) throw rejected('the sequence has ended: no token may follow', state);
  if (options.lazy === true) {
    const pick = pickUnmasked(logits, size, temperature, options);
    if (pick >= 0 && state.accept(pick)) {
      const forced = options.fastForward === false ? [] : fastForward(state, options.maxForcedBytes);
      return { token: pick, forced, done: state.done };
    }
  }
  const mask = state.mask();
  let best = -1;
  let bestLogit = -Infinity;
  let allowed = 0;
  for (let id = 0; id < logits.length; id++) {
    if (id >= size || !maskAllows(mask, id) || Number.isNaN(logits[id])) {
      logits[id] = -Infinity;
      continue;
    }
    allowed++;
    const logit = logits[id] as number;
    if (best === -1 || logit > bestLogit) {
      best = id;
      bestLogit = logit;
    }
  }
  if (allowed === 0) throw rejected('no token of the vocabulary can continue the value here', state);
  const token =
    temperature === 0 || bestLogit === -Infinity ? best : sample(logits, bestLogit, temperature, options);
  if (!state.accept(token)) throw rejected(`token ${token} was allowed by the mask but refused`, state);
  const forced = options.fastForward === false ? [] : fastForward(state, options.maxForcedBytes);
  return { token, forced, done: state.done };
}

/** The pick over every token of the vocabulary, as if nothing were masked; -1 when no logit is usable. */
function pickUnmasked(
  logits: Float32Array,
  size: number,
  temperature: number,
  options: SampleOptions,
): number {
  let best = -1;
  let bestLogit = -Infinity;
  for (let id = 0; id < size; id++) {
    const logit = logits[id] as number;
    if (logit > bestLogit) {
      best = id;
      bestLogit = logit;
    }
  }
  if (best === -1 || temperature === 0) return best;
  let total = 0;
  for (let id = 0; id < size; id++)
    total += Math.exp(((logits[id] as number) - bestLogit) / temperature) || 0;
  let at = (options.random ?? Math.random)() * total;
  for (let id = 0; id < size; id++) {
    at -= Math.exp(((logits[id] as number) - bestLogit) / temperature) || 0;
    if (at < 0) return id;
  }
  return best;
}

function sample(logits: Float32Array, max: number, temperature: number, options: SampleOptions): number {
  let total = 0;
  for (let id = 0; id < logits.length; id++) total += Math.exp(((logits[id] as number) - max) / temperature);
  let at = (options.random ?? Math.random)() * total;
  let last = -1;
  for (let id = 0; id < logits.length; id++) {
    const logit = logits[id] as number;
    if (logit === -Infinity) continue;
    last = id;
    at -= Math.exp((logit - max) / temperature);
    if (at < 0) return id;
  }
  return last;
}

/** Greedy longest-token cover of the forced bytes, each token taken by the state. */
function fastForward(state: ConstrainedState, maxBytes = DEFAULT_MAX_FORCED_BYTES): number[] {
  const bytes = state.forcedBytes(maxBytes);
  const byBytes = tokensByBytes(state.trie.vocabulary);
  const out: number[] = [];
  let at = 0;
  while (at < bytes.length) {
    let took = false;
    for (let end = Math.min(bytes.length, at + byBytes.longest); end > at; end--) {
      const id = byBytes.ids.get(String.fromCharCode(...bytes.slice(at, end)));
      if (id !== undefined && state.accept(id)) {
        out.push(id);
        at = end;
        took = true;
        break;
      }
    }
    if (!took) break;
  }
  return out;
}

interface BytesIndex {
  readonly ids: Map<string, number>;
  readonly longest: number;
}

const indexes = new WeakMap<Vocabulary, BytesIndex>();

/** Each token's bytes as a latin-1 key (the lowest id of equal ones), built once per vocabulary. */
function tokensByBytes(vocabulary: Vocabulary): BytesIndex {
  let index = indexes.get(vocabulary);
  if (index === undefined) {
    const ids = new Map<string, number>();
    let longest = 0;
    for (let id = 0; id < vocabulary.size; id++) {
      const bytes = vocabulary.bytes(id);
      if (bytes === null || bytes.length === 0 || vocabulary.eos.includes(id)) continue;
      const key = String.fromCharCode(...bytes);
      if (!ids.has(key)) ids.set(key, id);
      longest = Math.max(longest, bytes.length);
    }
    index = { ids, longest };
    indexes.set(vocabulary, index);
  }
  return index;
}

function rejected(message: string, state: ConstrainedState): CodecallError {
  return new CodecallError('GRAMMAR_REJECTED', message, {
    details: { position: state.matcher.position, tokens: state.tokens.length },
  });
}

/** A seeded random source in [0, 1) (xorshift32): the same seed gives the same samples. */
export function seededRandom(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}
