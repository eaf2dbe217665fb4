/**
 * A grammar compiled for the byte matcher: every rule becomes a Thompson NFA over bytes whose edges are byte
 * ranges, empty moves, or calls of another rule (a pushdown automaton; ADR 0051). The ε-closure of each state
 * within its rule is precomputed so the matcher only follows calls and returns at run time.
 */
import { CodecallError } from '../errors/index.ts';
import { utf8Sequences } from './utf8.ts';
import type { Expr, Grammar } from './ir.ts';

export interface Program {
  readonly stateCount: number;
  /** Per state: byte edges as flat [lo, hi, to, ...]. */
  readonly bytes: readonly Int32Array[];
  /** Per state: the states its ε-closure within the rule reaches (itself included). */
  readonly closure: readonly Int32Array[];
  /** Per state: calls as flat [rule start, return state (-1: a tail call), ...]. */
  readonly calls: readonly Int32Array[];
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
  readonly bytes: number[][] = [];
  readonly eps: number[][] = [];
  readonly calls: number[][] = [];
  readonly finals = new Set<number>();
  readonly ruleStart = new Map<string, number>();
  readonly pendingCalls: { from: number; rule: string; to: number }[] = [];
  private hoisted = new Map<Expr, string>();

  constructor(
    private readonly grammar: Grammar,
    private readonly maxStates: number,
  ) {}

  state(): number {
    if (this.bytes.length >= this.maxStates) {
      throw new CodecallError('GRAMMAR_TOO_LARGE', `the grammar needs more than ${this.maxStates} states`, {
        details: { max_states: this.maxStates },
      });
    }
    this.bytes.push([]);
    this.eps.push([]);
    this.calls.push([]);
    return this.bytes.length - 1;
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
          this.bytes[at]!.push(byte, byte, next);
          at = next;
        });
        if (bytes.length === 0) this.eps[from]!.push(to);
        break;
      }
      case 'chars':
        for (const seq of utf8Sequences(expr.ranges)) {
          let at = from;
          seq.forEach(([lo, hi], i) => {
            const next = i === seq.length - 1 ? to : this.state();
            this.bytes[at]!.push(lo, hi, next);
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
        if (expr.items.length === 0) this.eps[from]!.push(to);
        break;
      }
      case 'alt':
        for (const item of expr.items) {
          const start = this.state();
          const end = this.state();
          this.eps[from]!.push(start);
          this.eps[end]!.push(to);
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
      this.eps[at]!.push(head);
      this.expr(item, head, loop);
      this.eps[loop]!.push(head);
      this.eps[head]!.push(to);
      return;
    }
    for (let i = expr.min; i < expr.max; i++) {
      this.eps[at]!.push(to);
      const next = i === expr.max - 1 ? to : this.state();
      this.expr(item, at, next);
      at = next;
    }
    if (expr.min === expr.max) this.eps[at]!.push(to);
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
      this.calls[from]!.push(start, to);
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

function epsClosure(eps: number[][], state: number): number[] {
  if (eps[state]!.length === 0) return [state];
  const seen = new Set<number>([state]);
  const stack = [state];
  while (stack.length > 0) {
    for (const next of eps[stack.pop()!]!) {
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return [...seen];
}

export function compileProgram(grammar: Grammar, options: ProgramOptions = {}): Program {
  const builder = new Builder(grammar, options.maxStates ?? DEFAULT_MAX_STATES);
  for (const [name, body] of grammar.rules) builder.rule(name, body);
  builder.link();
  const count = builder.bytes.length;
  const final = new Uint8Array(count);
  for (const state of builder.finals) final[state] = 1;
  const rootStart = builder.ruleStart.get(grammar.root);
  if (rootStart === undefined) throw new CodecallError('INVALID_ARGUMENT', `no root rule ${grammar.root}`);
  // Only the states that do something: byte edges, calls, or a return.
  const closure = builder.eps.map((_, state) =>
    Int32Array.from(
      epsClosure(builder.eps, state).filter(
        (s) => builder.bytes[s]!.length > 0 || builder.calls[s]!.length > 0 || final[s] === 1,
      ),
    ),
  );
  // A call whose return state can only end its rule is a tail call (return state -1): the callee returns straight
  // to the caller's caller, so a chain of rules calling the next (an object's optional properties) stays flat.
  const calls = builder.calls.map((edges) => {
    const out = Int32Array.from(edges);
    for (let i = 0; i < out.length; i += 2) {
      const after = closure[out[i + 1]!]!;
      if (after.length === 1 && final[after[0]!] === 1) out[i + 1] = -1;
    }
    return out;
  });
  return {
    stateCount: count,
    bytes: builder.bytes.map((edges) => Int32Array.from(edges)),
    closure,
    calls,
    final,
    rootStart,
  };
}
