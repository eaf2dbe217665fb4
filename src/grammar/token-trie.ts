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

/**
 * The vocabulary's tokens as a byte trie in preorder: a node's subtree is the nodes after it up to `subtree`,
 * so a byte the grammar refuses skips every token below it in one step.
 */
export class TokenTrie {
  readonly vocabulary: Vocabulary;
  /** Nodes in preorder; node 0 is the root. */
  readonly #byte: Uint8Array;
  readonly #depth: Uint16Array;
  readonly #subtree: Uint32Array;
  /** Tokens ending at node i: #tokens[#tokenStart[i] .. #tokenStart[i + 1]). */
  readonly #tokenStart: Uint32Array;
  readonly #tokens: Uint32Array;
  readonly #words: number;

  constructor(vocabulary: Vocabulary) {
    this.vocabulary = vocabulary;
    this.#words = Math.ceil(vocabulary.size / 32);
    // Build as nested maps, then lay out in preorder with children by byte (deterministic).
    interface Build {
      children: Map<number, Build>;
      tokens: number[];
    }
    const root: Build = { children: new Map(), tokens: [] };
    let nodes = 1;
    for (let id = 0; id < vocabulary.size; id++) {
      const bytes = vocabulary.bytes(id);
      if (bytes === null || bytes.length === 0) continue;
      let node = root;
      for (const b of bytes) {
        let next = node.children.get(b);
        if (next === undefined) {
          next = { children: new Map(), tokens: [] };
          node.children.set(b, next);
          nodes++;
        }
        node = next;
      }
      node.tokens.push(id);
    }
    this.#byte = new Uint8Array(nodes);
    this.#depth = new Uint16Array(nodes);
    this.#subtree = new Uint32Array(nodes);
    this.#tokenStart = new Uint32Array(nodes + 1);
    const tokens: number[] = [];
    let at = 0;
    // Iterative preorder (a token may be hundreds of bytes long).
    const stack: { node: Build; byte: number; depth: number }[] = [{ node: root, byte: 0, depth: 0 }];
    const open: number[] = [];
    while (stack.length > 0) {
      const top = stack.pop() as (typeof stack)[number];
      while (open.length > 0 && (this.#depth[open[open.length - 1] as number] as number) >= top.depth) {
        const done = open.pop() as number;
        this.#subtree[done] = at - done;
      }
      const i = at++;
      this.#byte[i] = top.byte;
      this.#depth[i] = top.depth;
      this.#tokenStart[i] = tokens.length;
      tokens.push(...top.node.tokens);
      open.push(i);
      const children = [...top.node.children].sort((a, b) => b[0] - a[0]);
      for (const [byte, child] of children) stack.push({ node: child, byte, depth: top.depth + 1 });
    }
    while (open.length > 0) {
      const done = open.pop() as number;
      this.#subtree[done] = at - done;
    }
    this.#tokenStart[nodes] = tokens.length;
    this.#tokens = Uint32Array.from(tokens);
  }

  /** Nodes in the trie (the root included). */
  get nodes(): number {
    return this.#byte.length;
  }

  /**
   * The tokens allowed next, as a bitmask over token ids (bit `id % 32` of word `id >> 5`): every token whose
   * bytes the recognizer takes from its current state, and the end-of-sequence tokens when it is accepting. The
   * recognizer is left as it was.
   */
  mask(recognizer: ByteRecognizer, into: Uint32Array = new Uint32Array(this.#words)): Uint32Array {
    into.fill(0);
    const n = this.#byte.length;
    let pushed = 0;
    let i = 1;
    while (i < n) {
      const depth = this.#depth[i] as number;
      if (pushed >= depth) {
        recognizer.rollback(pushed - depth + 1);
        pushed = depth - 1;
      }
      if (recognizer.consume(this.#byte[i] as number)) {
        pushed = depth;
        for (let t = this.#tokenStart[i] as number, end = this.#tokenStart[i + 1] as number; t < end; t++) {
          const id = this.#tokens[t] as number;
          into[id >>> 5] = (into[id >>> 5] as number) | (1 << (id & 31));
        }
        i++;
      } else {
        i += this.#subtree[i] as number;
      }
    }
    if (pushed > 0) recognizer.rollback(pushed);
    if (recognizer.isAccepting()) {
      for (const id of this.vocabulary.eos) into[id >>> 5] = (into[id >>> 5] as number) | (1 << (id & 31));
    }
    return into;
  }
}

/** Whether token `id` is allowed by a mask `TokenTrie.mask` made. */
export function maskAllows(mask: Uint32Array, id: number): boolean {
  return ((mask[id >>> 5] ?? 0) & (1 << (id & 31))) !== 0;
}
