/**
 * The incremental byte matcher (ADR 0051): a set of pushdown stacks over the Program's rule automata. A stack is
 * an interned node (state, parent) — the parent holds where to return when the rule ends — so equal stacks are one
 * object and the frontier is a small set of them. Every step keeps its frontier, so rollback is a pop and a clone
 * shares everything. Steps go through the program's frontier table (ADR 0060), shared by its matchers.
 */
import { frontierTable } from './frontier-table.ts';
import type { Frontier, FrontierTable } from './frontier-table.ts';
import type { Program } from './program.ts';

export interface MatcherOptions {
  /** Deepest stack allowed (nesting of rules); past it the matcher refuses, as it does a left-recursive grammar. */
  maxDepth?: number;
  /** Most stacks one step may create: an ambiguous grammar must not take unbounded time per byte. */
  maxStacksPerStep?: number;
  /**
   * Bytes the program's shared frontier table may keep (ADR 0060: stacks, frontiers, transitions, token masks);
   * past it the table is emptied or a mask is computed without keeping. Default 32 MiB.
   */
  maxCacheBytes?: number;
}

/** Whether the input so far can still grow into a match, is one, or is one that cannot continue. */
export type MatchStatus = 'open' | 'accepting' | 'complete' | 'dead';

export const DEFAULT_MAX_CACHE_BYTES = 32 * 1024 * 1024;

export class GrammarMatcher {
  private readonly history: Frontier[];
  /** The program's frontier table, shared by every matcher of the program with the same limits (ADR 0060). */
  readonly table: FrontierTable;

  constructor(
    readonly program: Program,
    private readonly options: MatcherOptions = {},
    history?: Frontier[],
  ) {
    this.table = frontierTable(program, {
      maxDepth: options.maxDepth ?? 10_000,
      maxStacks: options.maxStacksPerStep ?? 100_000,
      maxCacheBytes: options.maxCacheBytes ?? DEFAULT_MAX_CACHE_BYTES,
    });
    this.history = history ?? [this.table.start()];
  }

  /** Bytes consumed so far. */
  get position(): number {
    return this.history.length - 1;
  }

  /** The frontier now (for the token trie's walk). */
  get top(): Frontier {
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
    const next = this.table.step(this.top, byte);
    if (next === null) return false;
    this.history.push(next);
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
    return new GrammarMatcher(this.program, this.options, [...this.history]);
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
}
