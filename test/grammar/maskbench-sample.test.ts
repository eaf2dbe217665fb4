/**
 * MaskBench's sample of real-world schemas (../shared/data/maskbench-sample): every schema that compiles without a
 * report accepts exactly its valid instances (keys in declared order first, as in the test-suite check), and the
 * share of schemas compiled without a report is printed beside the published engines' (SOURCE.md) and held above
 * a floor.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDataDir } from './shared-data.ts';
import { checkGroup, emptyResult, summary } from './suite-check.ts';
import type { SuiteGroup } from './suite-check.ts';

const data = sharedDataDir();
const dir = data === undefined ? undefined : join(data, 'maskbench-sample');
if (dir === undefined) console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');

describe.skipIf(dir === undefined)('MaskBench sample', () => {
  it(
    'accepts exactly the valid instances of every schema it compiles without a report',
    { timeout: 300_000 },
    () => {
      const result = emptyResult();
      const files = readdirSync(dir!).filter((f) => f.endsWith('.json'));
      for (const file of files) {
        const group = JSON.parse(readFileSync(join(dir!, file), 'utf8')) as SuiteGroup;
        checkGroup(file, { ...group, description: file }, result);
      }
      console.log(summary('maskbench-sample', result));
      console.log(
        'published full-support shares (11,306 schemas): llguidance 78.8%, XGrammar 71.8%, Outlines 62.4%, llama.cpp 57.6%',
      );
      expect(result.mismatches).toEqual([]);
      expect(result.compiled / result.total).toBeGreaterThan(0.78);
    },
  );
});
