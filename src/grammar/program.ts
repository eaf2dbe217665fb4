/**
 * A grammar compiled for the byte matcher: every rule becomes a Thompson NFA over bytes whose edges are byte
 * ranges, empty moves, or calls of another rule (a pushdown automaton; ADR 0051). The ε-closure of each state
 * within its rule is precomputed so the matcher only follows calls and returns at run time.
 */
import { CodecallError } from '../errors/index.ts';
import { utf8Sequences } from './utf8.ts';
import type { Expr, Grammar } from './ir.ts';

/**
 * Per-state lists in one flat array each (compressed rows: state s's items are at [start[s], start[s + 1])), so a
 * program of 200,000 states is a handful of typed arrays, not 600,000 small ones.
 */
export interface Program {
  readonly stateCount: number;
  /** Byte edges as [lo, hi, to] triples. */
  readonly byteStart: Int32Array;
  readonly byteEdges: Int32Array;
  /** The states each state's ε-closure within its rule reaches that do something (byte edges, calls, a return). */
  readonly closureStart: Int32Array;
  readonly closureStates: Int32Array;
  /** Calls as [rule start, return state (-1: a tail call)] pairs. */
  readonly callStart: Int32Array;
  readonly callEdges: Int32Array;
  /** Per state: the end of its rule (a return). */
  readonly final: Uint8Array;
  readonly rootStart: number;
}

export interface ProgramOptions {
  /** Refuses grammars past this many states (a hostile maxLength: 1e9 must not take the host's memory). */
  maxStates?: number;
}

const DEFAULT_MAX_STATES = 1_000_000;
/** A repeated item larger than this many states is hoisted into a rule of its own and called. */
const HOIST_STATES = 8;

class Builder {
  count = 0;
  /** Edge lists: bytes as (from, lo, hi, to), empty moves as (from, to), calls as (from, rule start, return). */
  readonly byteList: number[] = [];
  readonly epsList: number[] = [];
  readonly callList: number[] = [];
  readonly finals = new Set<number>();
  readonly ruleStart = new Map<string, number>();
  readonly pendingCalls: { from: number; rule: string; to: number }[] = [];
  private hoisted = new Map<Expr, string>();

  constructor(
    private readonly grammar: Grammar,
    private readonly maxStates: number,
  ) {}

  state(): number {
    if (this.count >= this.maxStates) {
      throw new CodecallError('GRAMMAR_TOO_LARGE', `the grammar needs more than ${this.maxStates} states`, {
        details: { max_states: this.maxStates },
      });
    }
    return this.count++;
  }

  private byte(from: number, lo: number, hi: number, to: number): void {
    this.byteList.push(from, lo, hi, to);
  }

  private eps(from: number, to: number): void {
    this.epsList.push(from, to);
  }

  rule(name: string, body: Expr): void {
    const start = this.state();
    this.ruleStart.set(name, start);
    const end = this.state();
    this.finals.add(end);
    this.expr(body, start, end);
  }

  /** Wires `expr` from `from` to `to`. */
  expr(expr: Expr, from: number, to: number): void {
    switch (expr.k) {
      case 'lit': {
        const bytes = Buffer.from(expr.s, 'utf8');
        let at = from;
        bytes.forEach((byte, i) => {
          const next = i === bytes.length - 1 ? to : this.state();
          this.byte(at, byte, byte, next);
          at = next;
        });
        if (bytes.length === 0) this.eps(from, to);
        break;
      }
      case 'chars':
        for (const seq of utf8Sequences(expr.ranges)) {
          let at = from;
          seq.forEach(([lo, hi], i) => {
            const next = i === seq.length - 1 ? to : this.state();
            this.byte(at, lo, hi, next);
            at = next;
          });
        }
        break;
      case 'seq': {
        let at = from;
        expr.items.forEach((item, i) => {
          const next = i === expr.items.length - 1 ? to : this.state();
          this.expr(item, at, next);
          at = next;
        });
        if (expr.items.length === 0) this.eps(from, to);
        break;
      }
      case 'alt':
        for (const item of expr.items) {
          const start = this.state();
          const end = this.state();
          this.eps(from, start);
          this.eps(end, to);
          this.expr(item, start, end);
        }
        break;
      case 'ref':
        this.pendingCalls.push({ from, rule: expr.name, to });
        break;
      case 'rep':
        this.repeat(expr, from, to);
        break;
    }
  }

  private repeat(expr: Extract<Expr, { k: 'rep' }>, from: number, to: number): void {
    let item = expr.item;
    const copies = expr.max === Infinity ? expr.min + 1 : expr.max;
    if (copies > 1 && size(item) > HOIST_STATES) item = { k: 'ref', name: this.hoist(item) };
    let at = from;
    for (let i = 0; i < expr.min; i++) {
      const next = this.state();
      this.expr(item, at, next);
      at = next;
    }
    if (expr.max === Infinity) {
      // A fresh loop head: a back edge into a shared state would let the input leave through that state's
      // other exits (an optional group's skip, say) in the middle of an iteration.
      const head = this.state();
      const loop = this.state();
      this.eps(at, head);
      this.expr(item, head, loop);
      this.eps(loop, head);
      this.eps(head, to);
      return;
    }
    for (let i = expr.min; i < expr.max; i++) {
      this.eps(at, to);
      const next = i === expr.max - 1 ? to : this.state();
      this.expr(item, at, next);
      at = next;
    }
    if (expr.min === expr.max) this.eps(at, to);
  }

  private hoist(item: Expr): string {
    let name = this.hoisted.get(item);
    if (name === undefined) {
      name = `\u0000rep${this.hoisted.size}`;
      this.hoisted.set(item, name);
      this.rule(name, item);
    }
    return name;
  }

  link(): void {
    for (const { from, rule, to } of this.pendingCalls) {
      const start = this.ruleStart.get(rule);
      if (start === undefined) {
        throw new CodecallError('INVALID_ARGUMENT', `the grammar refers to an undefined rule ${rule}`);
      }
      this.callList.push(from, start, to);
    }
    void this.grammar;
  }
}

/** A rough state count, to decide whether a repeated item is worth its own rule. */
function size(expr: Expr): number {
  switch (expr.k) {
    case 'lit':
      return expr.s.length;
    case 'chars':
      return expr.ranges.length;
    case 'ref':
      return 1;
    case 'rep':
      return size(expr.item) * Math.min(expr.max === Infinity ? expr.min + 1 : expr.max, 100);
    default:
      return expr.items.reduce((sum, item) => sum + size(item), 1);
  }
}

/** Edge lists (stride numbers per edge, the first being the source state) as compressed rows without the source. */
function rows(list: number[], stride: number, count: number): { start: Int32Array; items: Int32Array } {
  const start = new Int32Array(count + 1);
  for (let i = 0; i < list.length; i += stride) start[list[i]! + 1]! += stride - 1;
  for (let s = 0; s < count; s++) start[s + 1]! += start[s]!;
  const items = new Int32Array(start[count]!);
  const fill = start.slice(0, count);
  for (let i = 0; i < list.length; i += stride) {
    const at = fill[list[i]!]!;
    for (let k = 1; k < stride; k++) items[at + k - 1] = list[i + k]!;
    fill[list[i]!] = at + stride - 1;
  }
  return { start, items };
}

export function compileProgram(grammar: Grammar, options: ProgramOptions = {}): Program {
  const builder = new Builder(grammar, options.maxStates ?? DEFAULT_MAX_STATES);
  for (const [name, body] of grammar.rules) builder.rule(name, body);
  builder.link();
  const count = builder.count;
  const final = new Uint8Array(count);
  for (const state of builder.finals) final[state] = 1;
  const rootStart = builder.ruleStart.get(grammar.root);
  if (rootStart === undefined) throw new CodecallError('INVALID_ARGUMENT', `no root rule ${grammar.root}`);
  const bytes = rows(builder.byteList, 4, count);
  const calls = rows(builder.callList, 3, count);
  const eps = rows(builder.epsList, 2, count);
  const acts = (st: number): boolean =>
    bytes.start[st + 1]! > bytes.start[st]! || calls.start[st + 1]! > calls.start[st]! || final[st] === 1;
  // Each state's ε-closure within its rule, keeping only the states that do something.
  const closureStart = new Int32Array(count + 1);
  const closureList: number[] = [];
  const seen = new Int32Array(count).fill(-1);
  const stack: number[] = [];
  for (let state = 0; state < count; state++) {
    closureStart[state] = closureList.length;
    seen[state] = state;
    stack.push(state);
    while (stack.length > 0) {
      const at = stack.pop()!;
      if (acts(at)) closureList.push(at);
      for (let i = eps.start[at]!; i < eps.start[at + 1]!; i++) {
        const next = eps.items[i]!;
        if (seen[next] !== state) {
          seen[next] = state;
          stack.push(next);
        }
      }
    }
  }
  closureStart[count] = closureList.length;
  const closureStates = Int32Array.from(closureList);
  // A call whose return state can only end its rule is a tail call (return state -1): the callee returns straight
  // to the caller's caller, so a chain of rules calling the next (an object's optional properties) stays flat.
  for (let i = 1; i < calls.items.length; i += 2) {
    const ret = calls.items[i]!;
    if (
      closureStart[ret + 1]! - closureStart[ret]! === 1 &&
      final[closureStates[closureStart[ret]!]!] === 1
    ) {
      calls.items[i] = -1;
    }
  }
  return {
    stateCount: count,
    byteStart: bytes.start,
    byteEdges: bytes.items,
    closureStart,
    closureStates,
    callStart: calls.start,
    callEdges: calls.items,
    final,
    rootStart,
  };
}
