/**
 * The exports on real schemas (the MaskBench sample): the GBNF and Lark texts, read back, accept the same instances
 * as the grammar they were printed from, and the regex (where the schema is regular) agrees with the matcher.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../src/errors/index.ts';
import {
  compileProgram,
  grammarToGbnf,
  grammarToLark,
  grammarToRegex,
  schemaToGrammar,
} from '../../src/grammar/index.ts';
import { declaredOrderCandidates } from './declared-order.ts';
import { matches } from './feed.ts';
import { parseExported } from './parse-exported.ts';
import { sharedDataDir } from './shared-data.ts';

const data = sharedDataDir();
const dir = data === undefined ? undefined : join(data, 'maskbench-sample');
if (dir === undefined) console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');

interface Sample {
  schema: unknown;
  tests: { data: unknown }[];
}

describe.skipIf(dir === undefined)('grammar exports', () => {
  it('GBNF, Lark and regex accept what the grammar accepts', { timeout: 300_000 }, () => {
    let regular = 0;
    let checked = 0;
    const files = readdirSync(dir!)
      .filter((f) => f.endsWith('.json'))
      .slice(0, 160);
    for (const file of files) {
      const sample = JSON.parse(readFileSync(join(dir!, file), 'utf8')) as Sample;
      const { grammar, issues } = schemaToGrammar(sample.schema, {
        whitespace: file.length % 2 === 0 ? 'flexible' : 'compact',
      });
      if (issues.length > 0) continue;
      let program;
      try {
        program = compileProgram(grammar);
      } catch (error) {
        if (isCodecallError(error) && error.code === 'GRAMMAR_TOO_LARGE') continue;
        throw error;
      }
      const gbnf = compileProgram(parseExported(grammarToGbnf(grammar), 'gbnf'));
      const lark = compileProgram(parseExported(grammarToLark(grammar), 'lark'));
      let regex: RegExp | undefined;
      try {
        regex = new RegExp(grammarToRegex(grammar, { maxLength: 200_000 }), 'u');
        regular++;
      } catch (error) {
        if (!isCodecallError(error) || !['GRAMMAR_NOT_REGULAR', 'GRAMMAR_TOO_LARGE'].includes(error.code))
          throw error;
      }
      for (const test of sample.tests) {
        for (const candidate of declaredOrderCandidates(sample.schema, sample.schema, test.data)) {
          for (const text of [JSON.stringify(candidate), JSON.stringify(candidate, null, 1)]) {
            const expected = matches(program, text);
            checked++;
            expect([file, text, matches(gbnf, text)]).toEqual([file, text, expected]);
            expect([file, text, matches(lark, text)]).toEqual([file, text, expected]);
            if (regex !== undefined) expect([file, text, regex.test(text)]).toEqual([file, text, expected]);
          }
        }
      }
    }
    console.log(`exports: ${checked} texts checked, ${regular} schemas regular enough for a regex`);
    expect(regular).toBeGreaterThan(20);
  });
});
