/**
 * Soundness the other way round: random walks through the grammar (each byte drawn from the allowed ones) that end
 * in a complete match are valid JSON that ajv, an independent validator, accepts against the schema. On the
 * MaskBench sample's schemas that compile without a report (and that ajv's 2020-12 dialect compiles).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { compileProgram, GrammarMatcher, schemaToGrammar } from '../../src/grammar/index.ts';
import type { Program } from '../../src/grammar/index.ts';
import { sharedDataDir } from './shared-data.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const data = sharedDataDir();
const dir = data === undefined ? undefined : join(data, 'maskbench-sample');
if (dir === undefined) console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');

function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

const CLOSERS = new Set([...'}]"0'].map((c) => c.charCodeAt(0)));

/** One random walk; undefined when it does not end within the budget. */
function sample(program: Program, next: () => number, budget = 600): string | undefined {
  const matcher = new GrammarMatcher(program);
  const bytes: number[] = [];
  while (bytes.length < budget) {
    const status = matcher.status();
    if (status === 'complete' || (status === 'accepting' && next() < 0.5)) break;
    const set = matcher.allowedBytes();
    const allowed: number[] = [];
    for (let b = 0; b < 256; b++) if (set[b >> 5]! & (1 << (b & 31))) allowed.push(b);
    if (allowed.length === 0) return undefined;
    // Past half the budget, closing a value is preferred so most walks end.
    const closing = bytes.length > budget / 2 ? allowed.filter((b) => CLOSERS.has(b)) : [];
    const pool = closing.length > 0 && next() < 0.8 ? closing : allowed;
    const byte = pool[Math.floor(next() * pool.length)]!;
    expect(matcher.consume(byte)).toBe(true);
    bytes.push(byte);
  }
  return matcher.isAccepting() ? Buffer.from(bytes).toString('utf8') : undefined;
}

describe.skipIf(dir === undefined)('random walks through the grammar', () => {
  it('end in values an independent validator accepts', { timeout: 300_000 }, () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: true });
    addFormats(ajv);
    const next = random(11);
    let schemas = 0;
    let values = 0;
    const invalid: string[] = [];
    for (const file of readdirSync(dir!).filter((f) => f.endsWith('.json'))) {
      const { schema } = JSON.parse(readFileSync(join(dir!, file), 'utf8')) as {
        schema: Record<string, unknown>;
      };
      const { grammar, issues } = schemaToGrammar(schema);
      if (issues.length > 0) continue;
      let validate;
      try {
        const { $schema: _dialect, ...rest } = schema;
        validate = ajv.compile(rest);
      } catch {
        continue; // a draft-04/07 form ajv's 2020-12 dialect does not take
      }
      const program = compileProgram(grammar);
      schemas++;
      for (let i = 0; i < 6; i++) {
        const text = sample(program, next);
        if (text === undefined) continue;
        values++;
        let value: unknown;
        try {
          value = JSON.parse(text) as unknown;
        } catch (error) {
          invalid.push(`${file}: not JSON (${(error as Error).message}): ${JSON.stringify(text)}`);
          continue;
        }
        if (!validate(value))
          invalid.push(`${file}: ${text.slice(0, 200)} ${ajv.errorsText(validate.errors)}`);
      }
    }
    console.log(`random walks: ${values} complete values from ${schemas} schemas`);
    expect(invalid).toEqual([]);
    expect(values).toBeGreaterThan(500);
  });
});
