import { CodecallError } from '../errors/index.ts';
import { FrontierTable, OverBudget } from './frontier-table.ts';
import type { Frontier } from './frontier-table.ts';
import { ordinaryChars, SLICE_CUTS, sliceLevel, UNBOUNDED } from './token-slices.ts';
import { TrieLayout } from './trie-layout.ts';
import type { Vocabulary } from './vocabulary.ts';

/**
 * What a token mask asks of the grammar's matcher: advance over one byte if the grammar allows it, and undo. The
 * trie walk consumes each token's bytes once per shared prefix, so a mask costs about the bytes of the tokens that
 * can follow, not the whole vocabulary's.
 */
export interface ByteRecognizer {
  /** Advances over `byte` when the grammar allows it here; returns false and changes nothing otherwise. */
  consume(byte: number): boolean;
  /** Undoes the last `count` bytes consumed. */
  rollback(count: number): void;
  /** Whether what was pushed so far is a whole value (then an end-of-sequence token is allowed). */
  isAccepting(): boolean;
}

/** A recognizer with a frontier table (the grammar matcher): its masks walk the table's DFA (ADR 0060). */
interface TableRecognizer extends ByteRecognizer {
  readonly table: FrontierTable;
  readonly top: Frontier;
}

function hasTable(recognizer: ByteRecognizer): recognizer is TableRecognizer {
  return (recognizer as Partial<TableRecognizer>).table instanceof FrontierTable;
}

export interface TokenMaskOptions {
  /**
   * Most stack visits one mask's cache misses may cost (a hostile grammar must not take unbounded time per
   * token); past it GRAMMAR_TOO_COMPLEX. Default 50,000,000 (seconds, not minutes).
   */
  maxWork?: number;
}

const DEFAULT_MAX_WORK = 50_000_000;

/**
 * The vocabulary's tokens as byte tries: the whole vocabulary, and split by string slice (ADR 0060): the tokens
 * made of ordinary string characters by length (1..10, 11..30, more) and the rest.
 */
export class TokenTrie {
  readonly vocabulary: Vocabulary;
  readonly #all: TrieLayout;
  readonly #rest: TrieLayout;
  /** Tokens of ordinary characters longer than each cut, as tries; and the masks of those up to each cut. */
  readonly #longer: TrieLayout[];
  readonly #upTo: Uint32Array[];
  readonly #unbounded: Uint32Array;
  readonly #words: number;
  readonly #ids: Int32Array;

  constructor(vocabulary: Vocabulary) {
    this.vocabulary = vocabulary;
    this.#words = Math.ceil(vocabulary.size / 32);
    const all: number[] = [];
    const rest: number[] = [];
    const chars: number[] = [];
    for (let id = 0; id < vocabulary.size; id++) {
      const bytes = vocabulary.bytes(id);
      if (bytes === null || bytes.length === 0) continue;
      all.push(id);
      const n = ordinaryChars(bytes);
      if (n > 0) chars[id] = n;
      else rest.push(id);
    }
    this.#all = new TrieLayout(vocabulary, all);
    this.#rest = new TrieLayout(vocabulary, rest);
    this.#upTo = SLICE_CUTS.map((cut) =>
      this.#maskOf(all.filter((id) => (chars[id] ?? 0) > 0 && chars[id]! <= cut)),
    );
    this.#unbounded = this.#maskOf(all.filter((id) => (chars[id] ?? 0) > 0));
    this.#longer = SLICE_CUTS.map(
      (cut, i) =>
        new TrieLayout(
          vocabulary,
          all.filter(
            (id) => chars[id]! > cut && (i + 1 === SLICE_CUTS.length || chars[id]! <= SLICE_CUTS[i + 1]!),
          ),
        ),
    );
    this.#ids = new Int32Array(this.#all.maxDepth + 1);
  }

  #maskOf(ids: number[]): Uint32Array {
    const mask = new Uint32Array(this.#words);
    for (const id of ids) mask[id >>> 5]! |= 1 << (id & 31);
    return mask;
  }

  /** Nodes in the whole vocabulary's trie (the root included). */
  get nodes(): number {
    return this.#all.nodes;
  }

  /**
   * The tokens allowed next, as a bitmask over token ids (bit `id % 32` of word `id >> 5`): every token whose
   * bytes the recognizer takes from its current state, and the end-of-sequence tokens when it is accepting. The
   * recognizer is left as it was.
   */
  mask(
    recognizer: ByteRecognizer,
    into: Uint32Array = new Uint32Array(this.#words),
    options: TokenMaskOptions = {},
  ): Uint32Array {
    if (hasTable(recognizer)) this.#tableMask(recognizer, into, options.maxWork ?? DEFAULT_MAX_WORK);
    else {
      into.fill(0);
      walkRecognizer(this.#all, recognizer, into);
    }
    if (recognizer.isAccepting()) {
      for (const id of this.vocabulary.eos) into[id >>> 5]! |= 1 << (id & 31);
    }
    return into;
  }

  #tableMask(recognizer: TableRecognizer, into: Uint32Array, maxWork: number): void {
    const { table } = recognizer;
    const bound = { table, maxWork, workAtStart: table.work };
    // A walk that fills the table empties it and tries once more; a second overflow walks keeping nothing.
    for (let attempt = 0; attempt < 2; attempt++) {
      into.fill(0);
      try {
        this.#sliceWalk(table, bound, table.idOf(recognizer.top, true), into);
        return;
      } catch (error) {
        if (!(error instanceof OverBudget)) throw error;
        if (attempt === 0) table.reset();
      }
    }
    into.fill(0);
    walkTransient(this.#all, bound, recognizer.top, into);
  }

  #sliceWalk(table: FrontierTable, bound: WorkBound, start: number, into: Uint32Array): void {
    const kept = table.masks[start];
    if (kept !== undefined) {
      const base = kept.bits ?? this.#sliceMask(kept.level);
      if (base !== undefined) into.set(base);
      for (const id of kept.tokens) into[id >>> 5]! |= 1 << (id & 31);
      return;
    }
    const level = sliceLevel(table, start);
    const base = this.#sliceMask(level);
    if (base === undefined) walkTable(this.#all, bound, start, into, this.#ids);
    else {
      into.set(base);
      walkTable(this.#rest, bound, start, into, this.#ids);
      const i = level === UNBOUNDED ? SLICE_CUTS.length : SLICE_CUTS.indexOf(level as 10 | 30);
      for (let k = i; k < this.#longer.length; k++)
        walkTable(this.#longer[k]!, bound, start, into, this.#ids);
    }
    const tokens = listBeyond(into, base);
    table.keepMask(start, tokens === null ? { level, tokens: NONE, bits: into.slice() } : { level, tokens });
  }

  /** The tokens of ordinary characters a slice level allows without a walk (undefined at level 0). */
  #sliceMask(level: number): Uint32Array | undefined {
    if (level === 0) return undefined;
    return level === UNBOUNDED ? this.#unbounded : this.#upTo[SLICE_CUTS.indexOf(level as 10 | 30)]!;
  }
}

const NONE = new Int32Array(0);

/** The ids set in `mask` and not in `base`; null when there are more of them than words in the mask. */
function listBeyond(mask: Uint32Array, base: Uint32Array | undefined): Int32Array | null {
  const ids: number[] = [];
  for (let w = 0; w < mask.length; w++) {
    let bits = base === undefined ? mask[w]! : mask[w]! & ~base[w]!;
    while (bits !== 0) {
      if (ids.length >= mask.length) return null;
      const low = bits & -bits;
      ids.push(w * 32 + 31 - Math.clz32(low));
      bits ^= low;
    }
  }
  return Int32Array.from(ids);
}

interface WorkBound {
  readonly table: FrontierTable;
  readonly maxWork: number;
  readonly workAtStart: number;
}

function checkWork(bound: WorkBound): void {
  if (bound.table.work - bound.workAtStart > bound.maxWork) {
    throw new CodecallError(
      'GRAMMAR_TOO_COMPLEX',
      `a token mask took more than ${bound.maxWork} parse steps`,
      {
        details: { max_work: bound.maxWork },
      },
    );
  }
}

function allow(trie: TrieLayout, node: number, into: Uint32Array): void {
  for (let t = trie.tokenStart[node]!, end = trie.tokenStart[node + 1]!; t < end; t++) {
    const id = trie.tokens[t]!;
    into[id >>> 5]! |= 1 << (id & 31);
  }
}

/** The walk over the table's DFA: a trie node costs one array read once its step is known. */
function walkTable(
  trie: TrieLayout,
  bound: WorkBound,
  start: number,
  into: Uint32Array,
  ids: Int32Array,
): void {
  const { table } = bound;
  const { byte, depth, subtree } = trie;
  const n = byte.length;
  ids[0] = start;
  let trans = table.trans;
  let i = 1;
  while (i < n) {
    const d = depth[i]!;
    const b = byte[i]!;
    let to = trans[ids[d - 1]! * 256 + b]!;
    if (to === 0) {
      to = table.stepId(ids[d - 1]!, b, false) + 1;
      trans = table.trans;
      checkWork(bound);
    }
    if (to > 0) {
      ids[d] = to - 1;
      allow(trie, i, into);
      i++;
    } else {
      i += subtree[i]!;
    }
  }
}

/** The walk without keeping anything (the table is full): each step computed, dropped when the walk backs up. */
function walkTransient(trie: TrieLayout, bound: WorkBound, start: Frontier, into: Uint32Array): void {
  const { byte, depth, subtree } = trie;
  const n = byte.length;
  const path: Frontier[] = [start];
  let i = 1;
  while (i < n) {
    const d = depth[i]!;
    const next = bound.table.stepTransient(path[d - 1]!, byte[i]!);
    checkWork(bound);
    if (next !== null) {
      path[d] = next;
      allow(trie, i, into);
      i++;
    } else {
      i += subtree[i]!;
    }
  }
}

/** The walk with any recognizer's consume and rollback. */
function walkRecognizer(trie: TrieLayout, recognizer: ByteRecognizer, into: Uint32Array): void {
  const { byte, depth, subtree } = trie;
  const n = byte.length;
  let pushed = 0;
  let i = 1;
  while (i < n) {
    const d = depth[i]!;
    if (pushed >= d) {
      recognizer.rollback(pushed - d + 1);
      pushed = d - 1;
    }
    if (recognizer.consume(byte[i]!)) {
      pushed = d;
      allow(trie, i, into);
      i++;
    } else {
      i += subtree[i]!;
    }
  }
  if (pushed > 0) recognizer.rollback(pushed);
}

/** Whether token `id` is allowed by a mask `TokenTrie.mask` made. */
export function maskAllows(mask: Uint32Array, id: number): boolean {
  return ((mask[id >>> 5] ?? 0) & (1 << (id & 31))) !== 0;
}
