/**
 * Validates a JSON value as its bytes stream in (ADR 0057): the schema's grammar (ADR 0051) takes byte by byte, and
 * the first byte that cannot lead to a value of the schema stops the reply. What it says names the byte position
 * and the bytes that could have come there, for the model to fix on its next turn.
 */
import { compileProgram, GrammarMatcher, schemaToGrammar } from '../grammar/index.ts';
import type { Program } from '../grammar/index.ts';
import type { JsonSchema } from '../spec/index.ts';
import { JsonKeyTracker } from './json-key-tracker.ts';

/** Why a value was stopped, before the client names where (a tool call's arguments or the text). */
export interface ValueRefusal {
  readonly position: number;
  readonly expected: readonly string[];
  /** What came instead (the refused byte as text), or null when the value ended too soon. */
  readonly got: string | null;
}

/**
 * Bytes of one value held to its grammar; past them only the syntax is checked. The matcher keeps a frontier per
 * byte (its rollback history), so a hostile server's endless value must not grow it without bound.
 */
export const MAX_GRAMMAR_BYTES = 1024 * 1024;

/** A compiled schema's program, or null for a schema the grammar compiler refuses (it is then not validated). */
const programs = new WeakMap<object, Program | null>();

function programOf(schema: JsonSchema): Program | null {
  const key = schema as object;
  if (programs.has(key)) return programs.get(key) ?? null;
  let program: Program | null = null;
  try {
    // Flexible whitespace: a server that does not constrain its model may well send pretty-printed JSON. Keywords
    // the grammar cannot enforce only loosen it (they are still checked when the value is complete).
    program = compileProgram(schemaToGrammar(schema, { whitespace: 'flexible' }).grammar);
  } catch {
    program = null;
  }
  programs.set(key, program);
  return program;
}

const WHITESPACE = [0x09, 0x0a, 0x0d, 0x20];

/** The bytes of a 256-bit set as short text: `'"'`, `'}'`, `'0'-'9'`; whitespace left out when others are there. */
export function describeBytes(allowed: Uint32Array, limit = 12): string[] {
  const set = Uint32Array.from(allowed);
  const others = set.some(
    (word, i) => (i === 0 ? word & ~((1 << 9) | (1 << 10) | (1 << 13)) : i === 1 ? word & ~1 : word) !== 0,
  );
  if (others) for (const b of WHITESPACE) set[b >> 5] = (set[b >> 5] ?? 0) & ~(1 << (b & 31));
  const out: string[] = [];
  const show = (b: number): string => {
    if (b === 0x27) return `"'"`;
    if (b >= 0x20 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
    return `0x${b.toString(16).padStart(2, '0')}`;
  };
  for (let b = 0; b < 256 && out.length <= limit; b++) {
    if (((set[b >> 5] ?? 0) & (1 << (b & 31))) === 0) continue;
    let end = b;
    while (end < 255 && ((set[(end + 1) >> 5] ?? 0) & (1 << ((end + 1) & 31))) !== 0) end++;
    out.push(end === b ? show(b) : end === b + 1 ? `${show(b)}, ${show(end)}` : `${show(b)}-${show(end)}`);
    b = end;
  }
  return out.length > limit ? [...out.slice(0, limit), '...'] : out;
}

/**
 * One value's validation. The grammar holds properties in their declared order (ADR 0051), which a JSON Schema
 * does not ask for: a byte refused inside an object key that plain JSON would take may be a key in another order,
 * so from there only the syntax is checked (the complete value is validated against the schema as usual).
 */
export class ReplyValidator {
  readonly #matcher: GrammarMatcher | null;
  readonly #keys = new JsonKeyTracker();
  #schemaActive: boolean;
  #refusal: ValueRefusal | null = null;
  #bytes = 0;

  readonly #maxGrammarBytes: number;

  constructor(schema: JsonSchema | null, options: { readonly maxGrammarBytes?: number } = {}) {
    this.#maxGrammarBytes = options.maxGrammarBytes ?? MAX_GRAMMAR_BYTES;
    const program = schema === null ? null : programOf(schema);
    this.#matcher = program === null ? null : new GrammarMatcher(program);
    this.#schemaActive = this.#matcher !== null;
  }

  /** Whether a schema is checked at all (false for one the grammar compiler could not take). */
  get active(): boolean {
    return this.#matcher !== null;
  }

  get refusal(): ValueRefusal | null {
    return this.#refusal;
  }

  /** Takes more bytes of the value; returns the refusal at the first byte that cannot lead to a valid value. */
  push(bytes: Uint8Array): ValueRefusal | null {
    if (this.#refusal !== null || this.#matcher === null) return this.#refusal;
    for (const byte of bytes) {
      const syntaxOk = this.#keys.push(byte);
      if (this.#schemaActive && this.#bytes >= this.#maxGrammarBytes) this.#schemaActive = false;
      if (this.#schemaActive) {
        if (!this.#matcher.consume(byte)) {
          // A refused byte leaves the matcher where it was: what it allowed is still there to tell.
          if (syntaxOk && this.#keys.inKey) this.#schemaActive = false;
          else return this.#refuse(describeBytes(this.#matcher.allowedBytes()), String.fromCharCode(byte));
        }
      } else if (!syntaxOk) {
        return this.#refuse(this.#keys.expected(), String.fromCharCode(byte));
      }
      this.#bytes++;
    }
    return null;
  }

  /** At the end of the value: a refusal when it is not whole. */
  end(): ValueRefusal | null {
    if (this.#refusal !== null || this.#matcher === null) return this.#refusal;
    const whole = this.#schemaActive ? this.#matcher.isAccepting() : this.#keys.complete;
    if (whole) return null;
    const expected = this.#schemaActive ? describeBytes(this.#matcher.allowedBytes()) : this.#keys.expected();
    return this.#refuse(expected, null);
  }

  #refuse(expected: readonly string[], got: string | null): ValueRefusal {
    this.#refusal = { position: this.#bytes, expected, got };
    return this.#refusal;
  }
}

/** The refusal as the model reads it: `expected one of '"', '}' at byte 17 of the arguments of get_weather, got 'x'`. */
export function refusalMessage(refusal: ValueRefusal, what: string): string {
  const expected =
    refusal.expected.length === 1 ? refusal.expected[0] : `one of ${refusal.expected.join(', ')}`;
  const got = refusal.got === null ? `; ${what} ended there` : `, got ${JSON.stringify(refusal.got)}`;
  return (
    `expected ${expected} at byte ${refusal.position} of ${what}${got}; ` +
    'the reply was stopped there because no valid value can follow: send it again, whole and valid'
  );
}
