/**
 * The frontier table (ADR 0060): a lazily built DFA over the matcher's frontiers (sets of pushdown stacks), shared
 * by every matcher of one program. A frontier is interned once (equal sets of stacks are one id) and each (frontier,
 * byte) step is computed once, so a token mask's trie walk costs an array read per trie node instead of an
 * ε-closure. Every cache here (stacks, frontiers, transitions, masks, slice levels) is charged to one byte budget:
 * past it, the table is emptied before it would grow (between walks) or a walk goes on without keeping anything.
 */
import { CodecallError } from '../errors/index.ts';
import type { Program } from './program.ts';

export interface StackNode {
  readonly id: number;
  readonly state: number;
  readonly parent: StackNode | null;
  readonly depth: number;
}

/** A set of stacks after some input: the stacks whose top state has byte edges, and whether the input can end. */
export interface Frontier {
  readonly nodes: readonly StackNode[];
  readonly accepting: boolean;
  /** Its id in the table of generation `gen` (-1: not interned). */
  id: number;
  gen: number;
}

export interface FrontierLimits {
  /** Deepest stack allowed (nesting of rules); past it the matcher refuses, as it does a left-recursive grammar. */
  maxDepth: number;
  /** Most stacks one step may create: an ambiguous grammar must not take unbounded time per byte. */
  maxStacks: number;
  /** Bytes the table may keep (stacks, frontiers, transitions, masks). */
  maxCacheBytes: number;
}

/** Thrown inside a walk that would make the table grow past its budget; the walk falls back to not keeping. */
export class OverBudget extends Error {}

/** Estimated bytes per kept item (V8 objects and map entries), charged against the budget. */
const NODE_BYTES = 80;
const FRONTIER_BYTES = 160;
/** Room asked for a new frontier's transition row (a doubling of the row array may be due). */
const ROW_BYTES = 256 * 4 * 2;
/** Transition values: 0 not computed yet, -1 dead, id + 1 otherwise. */
const DEAD = -1;

/**
 * A kept token mask: the string slice mask of `level` (none at 0) and the other allowed tokens, listed. Most masks
 * are a slice and a few hundred tokens, or a few hundred tokens: a list costs far less of the budget than a bitmask
 * of the whole vocabulary (16 KiB for Llama 3), so the table keeps many more before it is emptied.
 */
export interface KeptMask {
  readonly level: number;
  readonly tokens: Int32Array;
  /** The whole mask instead, when the list would be larger. */
  readonly bits?: Uint32Array;
}

export class FrontierTable {
  gen = 0;
  /** Bytes kept now; never above `limits.maxCacheBytes` once a step returns. */
  bytes = 0;
  /** Times the table was emptied to stay under its budget. */
  resets = 0;
  /** Stack visits by closures (the work of cache misses), for work bounds per mask. */
  work = 0;
  private nextNodeId = 1;
  private nodes = new Map<number, StackNode>();
  private byKey = new Map<string, Frontier>();
  frontiers: Frontier[] = [];
  /** Row id * 256 + byte: the step's frontier (see DEAD). */
  trans = new Int32Array(0);
  /** The byte class of the step being computed (see advance). */
  private readonly range = new Int32Array(2);
  /** Per frontier id: its token mask once computed, and its string slice level (-1: not computed). */
  masks: (KeptMask | undefined)[] = [];
  sliceLevels: number[] = [];
  /** Per frontier id: the frontiers each ordinary string character leads to (null: one is refused). */
  charTargets: (Int32Array | null | undefined)[] = [];

  constructor(
    readonly program: Program,
    readonly limits: FrontierLimits,
  ) {}

  /** Empties every cache (live matchers keep their own frontiers, which re-enter when next stepped from). */
  reset(): void {
    this.gen++;
    this.resets++;
    this.bytes = 0;
    this.nodes = new Map();
    this.byKey = new Map();
    this.frontiers = [];
    this.trans = new Int32Array(0);
    this.masks = [];
    this.sliceLevels = [];
    this.charTargets = [];
  }

  /** Whether `extra` more bytes fit; with `evict`, empties the table first when they do not. */
  private fits(extra: number, evict: boolean): boolean {
    if (this.bytes + extra <= this.limits.maxCacheBytes) return true;
    if (!evict) return false;
    this.reset();
    return this.bytes + extra <= this.limits.maxCacheBytes;
  }

  /** The start frontier. */
  start(): Frontier {
    return this.close([[this.program.rootStart, null]], 'evict');
  }

  /** The frontier's id in this generation, interning it (emptying the table first when full, with `evict`). */
  idOf(frontier: Frontier, evict: boolean): number {
    if (frontier.gen === this.gen && frontier.id >= 0) return frontier.id;
    const key = keyOf(frontier);
    const found = this.byKey.get(key);
    if (found !== undefined) return found.id;
    if (!this.fits(FRONTIER_BYTES + key.length * 2 + ROW_BYTES, evict)) throw new OverBudget();
    return this.add(frontier, key, evict);
  }

  private add(frontier: Frontier, key: string, evict: boolean): number {
    const size = FRONTIER_BYTES + key.length * 2;
    if ((this.frontiers.length + 1) * 256 > this.trans.length) this.grow(evict, size);
    const id = this.frontiers.length;
    frontier.id = id;
    frontier.gen = this.gen;
    this.frontiers.push(frontier);
    this.byKey.set(key, frontier);
    this.masks.push(undefined);
    this.sliceLevels.push(-1);
    this.charTargets.push(undefined);
    this.bytes += size;
    return id;
  }

  /** Room for one more row: the row array doubles, or grows by what fits; its whole capacity is charged. */
  private grow(evict: boolean, reserve: number): void {
    // Near the budget, grow by the rows that still fit (not one row at a time: each growth copies the array),
    // leaving `reserve` bytes for the frontier the row is for.
    const room = Math.floor((this.limits.maxCacheBytes - this.bytes - reserve) / 1024) * 256;
    const length = Math.min(Math.max(256 * 16, this.trans.length * 2), this.trans.length + room);
    const extra = (length - this.trans.length) * 4;
    if (length < (this.frontiers.length + 1) * 256 || !this.fits(extra, false)) {
      if (!evict) throw new OverBudget();
      this.reset();
      this.grow(false, reserve);
      return;
    }
    const grown = new Int32Array(length);
    grown.set(this.trans);
    this.trans = grown;
    this.bytes += extra;
  }

  /** The frontier after `byte` from frontier `id`, or -1 when the byte is refused. */
  stepId(id: number, byte: number, evict: boolean): number {
    const at = id * 256 + byte;
    const known = this.trans[at]!;
    if (known !== 0) return known === DEAD ? -1 : known - 1;
    const gen = this.gen;
    const range = this.range;
    const next = this.advance(this.frontiers[id]!, byte, evict ? 'evict' : 'walk', range);
    // Every byte of the class (no edge of this frontier tells them apart) takes the same step: one closure for
    // the whole run of bytes, so a string's inside costs a few closures per frontier, not ninety.
    const row = id * 256;
    if (next === null) {
      if (this.gen === gen) this.trans.fill(DEAD, row + range[0]!, row + range[1]! + 1);
      return -1;
    }
    const nextId = this.idOf(next, evict);
    // An eviction while interning emptied the row: the caller's id is stale then, so nothing is written.
    if (this.gen === gen) this.trans.fill(nextId + 1, row + range[0]!, row + range[1]! + 1);
    return nextId;
  }

  /** The matcher's step: the cached transition when there is one, else computed and kept (evicting when full). */
  step(frontier: Frontier, byte: number): Frontier | null {
    try {
      const id = this.idOf(frontier, true);
      const next = this.stepId(id, byte, true);
      return next < 0 ? null : this.frontiers[next]!;
    } catch (error) {
      // A budget too small for even one frontier: the step is computed and not kept.
      if (!(error instanceof OverBudget)) throw error;
      return this.advance(frontier, byte, 'no');
    }
  }

  /** A step computed without the table (for walks past the budget): nothing is kept. */
  stepTransient(frontier: Frontier, byte: number): Frontier | null {
    return this.advance(frontier, byte, 'no');
  }

  /**
   * The step over `byte`; with `range`, also the run of bytes around it that every edge of the frontier treats as
   * it treats `byte` (they step to the same frontier), as [lo, hi].
   */
  private advance(
    frontier: Frontier,
    byte: number,
    keep: 'evict' | 'walk' | 'no',
    range?: Int32Array,
  ): Frontier | null {
    const { byteStart, byteEdges } = this.program;
    const starts: [number, StackNode | null][] = [];
    let lo = 0;
    let hi = 255;
    for (const node of frontier.nodes) {
      for (let i = byteStart[node.state]!, end = byteStart[node.state + 1]!; i < end; i += 3) {
        const a = byteEdges[i]!;
        const z = byteEdges[i + 1]!;
        if (byte >= a && byte <= z) {
          starts.push([byteEdges[i + 2]!, node.parent]);
          if (a > lo) lo = a;
          if (z < hi) hi = z;
        } else if (a > byte) {
          if (a - 1 < hi) hi = a - 1;
        } else if (z + 1 > lo) lo = z + 1;
      }
    }
    if (range !== undefined) {
      range[0] = lo;
      range[1] = hi;
    }
    if (starts.length === 0) return null;
    return this.close(starts, keep);
  }

  private node(state: number, parent: StackNode | null, fresh: Map<number, StackNode>): StackNode {
    const key = (parent === null ? 0 : parent.id) * this.program.stateCount + state;
    let found = this.nodes.get(key) ?? fresh.get(key);
    if (found === undefined) {
      found = { id: this.nextNodeId++, state, parent, depth: parent === null ? 0 : parent.depth + 1 };
      fresh.set(key, found);
    }
    return found;
  }

  /** Keeps a step's new stacks (evicting first when full, with `evict`; else past the budget, OverBudget). */
  private commit(fresh: Map<number, StackNode>, evict: boolean): void {
    const extra = fresh.size * NODE_BYTES;
    if (!this.fits(extra, evict)) {
      if (!evict) throw new OverBudget();
      // One step's stacks alone exceed the budget: they live with the frontier, unshared.
      return;
    }
    for (const [key, node] of fresh) this.nodes.set(key, node);
    this.bytes += extra;
  }

  /** The ε-closure across calls and returns of the given (state, parent) pairs. */
  private close(starts: [number, StackNode | null][], keep: 'evict' | 'walk' | 'no'): Frontier {
    const { closureStart, closureStates, callStart, callEdges, final, byteStart } = this.program;
    const local = new Map<number, StackNode>();
    const seen = new Set<number>();
    const nodes: StackNode[] = [];
    let accepting = false;
    const work: StackNode[] = [];
    const { maxDepth, maxStacks } = this.limits;
    const push = (state: number, parent: StackNode | null): void => {
      const node = this.node(state, parent, local);
      if (seen.has(node.id)) return;
      if (node.depth > maxDepth) {
        throw new CodecallError('GRAMMAR_TOO_COMPLEX', `the grammar nests deeper than ${maxDepth} rules`, {
          details: { max_depth: maxDepth },
        });
      }
      if (seen.size >= maxStacks) {
        throw new CodecallError('GRAMMAR_TOO_COMPLEX', `one byte opened more than ${maxStacks} parses`, {
          details: { max_stacks: maxStacks },
        });
      }
      seen.add(node.id);
      work.push(node);
    };
    for (const [state, parent] of starts) push(state, parent);
    while (work.length > 0) {
      const node = work.pop()!;
      for (let c = closureStart[node.state]!, cEnd = closureStart[node.state + 1]!; c < cEnd; c++) {
        const s = closureStates[c]!;
        this.work++;
        let inner = node;
        if (s !== node.state) {
          inner = this.node(s, node.parent, local);
          if (seen.has(inner.id)) continue;
          seen.add(inner.id);
        }
        if (byteStart[s + 1]! > byteStart[s]!) nodes.push(inner);
        for (let i = callStart[s]!, iEnd = callStart[s + 1]!; i < iEnd; i += 2) {
          const ret = callEdges[i + 1]!;
          push(callEdges[i]!, ret < 0 ? node.parent : this.node(ret, node.parent, local));
        }
        if (final[s] === 1) {
          if (node.parent === null) accepting = true;
          else push(node.parent.state, node.parent.parent);
        }
      }
    }
    if (keep !== 'no') this.commit(local, keep === 'evict');
    return { nodes, accepting, id: -1, gen: -1 };
  }

  /**
   * The frontier of `nodes`' states with no stack below (ADR 0060, amended 2026-12-07): what it takes, any stack
   * below takes too (a rule's end there only makes it accepting), so its string slice level is a lower bound for
   * every frontier holding these states over one parent, and it is one frontier whatever the parent.
   */
  projected(nodes: readonly StackNode[]): number {
    const local = new Map<number, StackNode>();
    const tops = nodes.map((n) => this.node(n.state, null, local));
    this.commit(local, false);
    return this.idOf({ nodes: tops, accepting: false, id: -1, gen: -1 }, false);
  }

  /** Keeps a frontier's ordinary-character targets when they fit (never evicting: the caller holds ids). */
  keepCharTargets(id: number, targets: Int32Array | null): void {
    const size = 32 + (targets?.byteLength ?? 0);
    if (!this.fits(size, false)) return;
    this.charTargets[id] = targets;
    this.bytes += size;
  }

  /** Keeps a frontier's mask when it fits (never evicting: the caller holds ids). */
  keepMask(id: number, mask: KeptMask): void {
    const size = mask.tokens.byteLength + (mask.bits?.byteLength ?? 0) + 64;
    if (!this.fits(size, false)) return;
    this.masks[id] = mask;
    this.bytes += size;
  }
}

function keyOf(frontier: Frontier): string {
  const ids = frontier.nodes.map((n) => n.id).sort((a, b) => a - b);
  return `${frontier.accepting ? 1 : 0}:${ids.join(',')}`;
}

const tables = new WeakMap<Program, Map<string, FrontierTable>>();

/** The table every matcher of `program` with these limits shares. */
export function frontierTable(program: Program, limits: FrontierLimits): FrontierTable {
  let byLimits = tables.get(program);
  if (byLimits === undefined) {
    byLimits = new Map();
    tables.set(program, byLimits);
  }
  const key = `${limits.maxDepth}/${limits.maxStacks}/${limits.maxCacheBytes}`;
  let table = byLimits.get(key);
  if (table === undefined) {
    table = new FrontierTable(program, limits);
    byLimits.set(key, table);
  }
  return table;
}
