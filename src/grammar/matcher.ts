/**
 * The incremental byte matcher (ADR 0051): a set of pushdown stacks over the Program's rule automata. A stack is
 * an interned node (state, parent) — the parent holds where to return when the rule ends — so equal stacks are one
 * object and the frontier is a small set of them. Every step keeps its frontier, so rollback is a pop and a clone
 * shares everything: the token layer (slice 2) walks a vocabulary trie with consume/rollback.
 */
import { CodecallError } from '../errors/index.ts';
import type { Program } from './program.ts';

interface Node {
  readonly id: number;
  readonly state: number;
  readonly parent: Node | null;
  readonly depth: number;
}

interface Frontier {
  /** Stacks whose top state has byte edges. */
  readonly nodes: readonly Node[];
  /** The input so far is a complete match (the root rule can end here). */
  readonly accepting: boolean;
}

export interface MatcherOptions {
  /** Deepest stack allowed (nesting of rules); past it the matcher refuses, as it does a left-recursive grammar. */
  maxDepth?: number;
  /** Most stacks one step may create: an ambiguous grammar must not take unbounded time per byte. */
  maxStacksPerStep?: number;
}

/** Whether the input so far can still grow into a match, is one, or is one that cannot continue. */
export type MatchStatus = 'open' | 'accepting' | 'complete' | 'dead';

class Interner {
  private readonly table = new Map<number, Node>();
  private nextId = 1;
  constructor(private readonly stateCount: number) {}

  node(state: number, parent: Node | null): Node {
    const key = (parent === null ? 0 : parent.id) * this.stateCount + state;
    let found = this.table.get(key);
    if (found === undefined) {
      found = { id: this.nextId++, state, parent, depth: parent === null ? 0 : parent.depth + 1 };
      this.table.set(key, found);
    }
    return found;
  }
}

export class GrammarMatcher {
  private readonly history: Frontier[];
  private readonly maxDepth: number;
  private readonly maxStacks: number;

  constructor(
    private readonly program: Program,
    options: MatcherOptions = {},
    private readonly interner = new Interner(program.stateCount),
    history?: Frontier[],
  ) {
    this.maxDepth = options.maxDepth ?? 10_000;
    this.maxStacks = options.maxStacksPerStep ?? 100_000;
    this.history = history ?? [this.close([[program.rootStart, null]])];
  }

  /** Bytes consumed so far. */
  get position(): number {
    return this.history.length - 1;
  }

  private get top(): Frontier {
    return this.history[this.history.length - 1]!;
  }

  status(): MatchStatus {
    const { nodes, accepting } = this.top;
    if (nodes.length === 0) return accepting ? 'complete' : 'dead';
    return accepting ? 'accepting' : 'open';
  }

  /** How many parse stacks are alive (1 for an unambiguous point; a measure of the grammar's ambiguity). */
  get stacks(): number {
    return this.top.nodes.length;
  }

  isAccepting(): boolean {
    return this.top.accepting;
  }

  /** Consumes one byte if the grammar allows it; returns false (and changes nothing) otherwise. */
  consume(byte: number): boolean {
    const { byteStart, byteEdges } = this.program;
    const starts: [number, Node | null][] = [];
    for (const node of this.top.nodes) {
      for (let i = byteStart[node.state]!, end = byteStart[node.state + 1]!; i < end; i += 3) {
        if (byte >= byteEdges[i]! && byte <= byteEdges[i + 1]!) starts.push([byteEdges[i + 2]!, node.parent]);
      }
    }
    if (starts.length === 0) return false;
    this.history.push(this.close(starts));
    return true;
  }

  /** Consumes bytes until one is refused; returns how many were consumed. */
  consumeBytes(input: Uint8Array): number {
    for (let i = 0; i < input.length; i++) if (!this.consume(input[i]!)) return i;
    return input.length;
  }

  /** Undoes the last `count` bytes. */
  rollback(count: number): void {
    if (count < 0 || count > this.position) throw new RangeError(`cannot roll back ${count} bytes`);
    this.history.length -= count;
  }

  /** An independent matcher at the same point; the two share their (immutable) past. */
  clone(): GrammarMatcher {
    return new GrammarMatcher(
      this.program,
      { maxDepth: this.maxDepth, maxStacksPerStep: this.maxStacks },
      this.interner,
      [...this.history],
    );
  }

  /** The bytes that can come next, as a 256-bit set (bit b of word b >> 5). */
  allowedBytes(): Uint32Array {
    const set = new Uint32Array(8);
    const { byteStart, byteEdges } = this.program;
    for (const node of this.top.nodes) {
      for (let i = byteStart[node.state]!, end = byteStart[node.state + 1]!; i < end; i += 3) {
        for (let b = byteEdges[i]!; b <= byteEdges[i + 1]!; b++) set[b >> 5]! |= 1 << (b & 31);
      }
    }
    return set;
  }

  /** The ε-closure across calls and returns of the given (state, parent) pairs. */
  private close(starts: [number, Node | null][]): Frontier {
    const { closureStart, closureStates, callStart, callEdges, final, byteStart } = this.program;
    const seen = new Set<number>();
    const nodes: Node[] = [];
    let accepting = false;
    const work: Node[] = [];
    const push = (state: number, parent: Node | null): void => {
      const node = this.interner.node(state, parent);
      if (seen.has(node.id)) return;
      if (node.depth > this.maxDepth) {
        throw new CodecallError(
          'GRAMMAR_TOO_COMPLEX',
          `the grammar nests deeper than ${this.maxDepth} rules`,
          {
            details: { max_depth: this.maxDepth },
          },
        );
      }
      if (seen.size >= this.maxStacks) {
        throw new CodecallError('GRAMMAR_TOO_COMPLEX', `one byte opened more than ${this.maxStacks} parses`, {
          details: { max_stacks: this.maxStacks },
        });
      }
      seen.add(node.id);
      work.push(node);
    };
    for (const [state, parent] of starts) push(state, parent);
    while (work.length > 0) {
      const node = work.pop()!;
      // Each node is a state at the head of its ε-closure; expand the closure with the same parent.
      for (let c = closureStart[node.state]!, cEnd = closureStart[node.state + 1]!; c < cEnd; c++) {
        const s = closureStates[c]!;
        if (s !== node.state) {
          const inner = this.interner.node(s, node.parent);
          if (seen.has(inner.id)) continue;
          seen.add(inner.id);
        }
        if (byteStart[s + 1]! > byteStart[s]!)
          nodes.push(s === node.state ? node : this.interner.node(s, node.parent));
        for (let i = callStart[s]!, iEnd = callStart[s + 1]!; i < iEnd; i += 2) {
          const ret = callEdges[i + 1]!;
          push(callEdges[i]!, ret < 0 ? node.parent : this.interner.node(ret, node.parent));
        }
        if (final[s] === 1) {
          if (node.parent === null) accepting = true;
          else push(node.parent.state, node.parent.parent);
        }
      }
    }
    return { nodes, accepting };
  }
}
