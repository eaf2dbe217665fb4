/**
 * BFCL's function definitions (../shared/data/bfcl, the single-turn categories with answers): after mapping BFCL's
 * own type names to JSON Schema (dict, float, tuple, any), every ground-truth call's arguments, with the first
 * allowed value of each (an argument whose first allowed value is "" left out), in declared order, is accepted by
 * the grammar of its function's parameters. Some ground truths break their own schema (a value outside its enum, a
 * required argument missing, null for a string): ajv says which, and those are counted, not fed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compileProgram, schemaToGrammar } from '../../src/grammar/index.ts';
import { declaredOrderCandidates } from './declared-order.ts';
import { matches } from './feed.ts';
import { sharedDataDir } from './shared-data.ts';

const data = sharedDataDir();
const dir = data === undefined ? undefined : join(data, 'bfcl');
if (dir === undefined) console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const TYPES: Record<string, string> = { dict: 'object', float: 'number', tuple: 'array' };

/** BFCL's parameter schema as JSON Schema. */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!isObject(schema)) return schema;
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && value === 'any') continue;
    if (key === 'type' && typeof value === 'string') out.type = TYPES[value] ?? value;
    else if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v)]));
    } else if (key === 'items' || key === 'additionalProperties') out[key] = toJsonSchema(value);
    else out[key] = value;
  }
  return out;
}

/** Arguments from BFCL's allowed values: the first of each ("" first: left out), nested dicts alike. */
function pickArgs(args: Obj): Obj {
  return Object.fromEntries(
    Object.entries(args)
      .filter(([, allowed]) => Array.isArray(allowed) && allowed[0] !== '')
      .map(([k, allowed]) => [k, pickValue((allowed as unknown[])[0])]),
  );
}

function pickValue(value: unknown): unknown {
  if (isObject(value)) return Object.values(value).every(Array.isArray) ? pickArgs(value) : value;
  return Array.isArray(value) ? value.map(pickValue) : value;
}

interface Question {
  id: string;
  function: { name: string; parameters: unknown }[];
}

describe.skipIf(dir === undefined)('BFCL ground truth', () => {
  it('every ground-truth call is accepted by its function parameters grammar', { timeout: 300_000 }, () => {
    const ajv = new Ajv2020({ strict: false });
    let calls = 0;
    let reported = 0;
    let invalid = 0;
    const rejected: string[] = [];
    const files = readdirSync(dir!).filter((f) => f.endsWith('.answers.json'));
    for (const answers of files) {
      const lines = (file: string) =>
        readFileSync(join(dir!, file), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as unknown);
      const questions = new Map((lines(answers.replace('.answers', '')) as Question[]).map((q) => [q.id, q]));
      for (const answer of lines(answers) as { id: string; ground_truth: Record<string, Obj>[] }[]) {
        const question = questions.get(answer.id);
        if (question === undefined) continue;
        for (const call of answer.ground_truth) {
          for (const [name, args] of Object.entries(call)) {
            const fn = question.function.find((f) => f.name === name);
            if (fn === undefined) continue;
            const schema = toJsonSchema(fn.parameters);
            const { grammar, issues } = schemaToGrammar(schema);
            if (issues.length > 0) {
              reported++;
              continue;
            }
            const value = pickArgs(args);
            if (!ajv.validate(schema as object, value)) {
              invalid++;
              continue;
            }
            calls++;
            const program = compileProgram(grammar);
            const ok = declaredOrderCandidates(schema, schema, value).some((c) =>
              matches(program, JSON.stringify(c)),
            );
            if (!ok) rejected.push(`${answer.id} ${name}: ${JSON.stringify(value).slice(0, 160)}`);
          }
        }
      }
    }
    console.log(
      `bfcl: ${calls} ground-truth calls checked, ${reported} with a report, ${invalid} invalid by their own schema, ${rejected.length} rejected`,
    );
    expect(rejected).toEqual([]);
    expect(calls).toBeGreaterThan(1000);
  });
});
