/**
 * The official JSON-Schema-Test-Suite (draft 2020-12): for every case whose schema compiles without a report, the
 * matcher accepts exactly the instances marked valid, fed as their JSON.stringify form byte by byte with keys put
 * in the schema's declared order first (declared-order.ts says why). format.json is left out: it tests format as
 * an annotation, and the grammar enforces formats; optional/format/ tests them as assertions instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDataDir } from './shared-data.ts';
import { checkGroup, emptyResult, summary } from './suite-check.ts';
import type { SuiteGroup } from './suite-check.ts';

const data = sharedDataDir();
const suite = data === undefined ? undefined : join(data, 'json-schema-test-suite/tests/draft2020-12');
if (suite === undefined) console.log('skipped: no ../shared/data (set CODECALL_SHARED_DATA)');

const FORMATS = [
  'date',
  'time',
  'date-time',
  'uuid',
  'email',
  'uri',
  'ipv4',
  'ipv6',
  'uri-reference',
  'iri',
  'iri-reference',
  'duration',
  'json-pointer',
];
/**
 * Valid values the format grammars refuse on purpose (stricter, never looser; ADR 0051): a leap second at another
 * offset than zero, and e-mail's quoted local parts and address literals, an IRI's private-use characters.
 */
const STRICTER = [
  /leap second/,
  /quoted string/,
  /address-literal after the @ is valid/,
  /private-use char in query/,
];

/** The suite's remote documents, by the URI its tests use for them (the schema compiler fetches nothing). */
function remotes(): Record<string, unknown> {
  const root = join(data!, 'json-schema-test-suite/remotes');
  const out: Record<string, unknown> = {};
  for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.json'),
  )) {
    out[`http://localhost:1234/${file}`] = JSON.parse(readFileSync(join(root, file), 'utf8')) as unknown;
  }
  return out;
}

function run(dir: string, files: string[], flexible = false) {
  const result = emptyResult();
  const documents = remotes();
  for (const file of files) {
    const groups = JSON.parse(readFileSync(join(dir, file), 'utf8')) as SuiteGroup[];
    for (const group of groups) checkGroup(file, group, result, flexible, documents);
  }
  return result;
}

describe.skipIf(suite === undefined)('JSON-Schema-Test-Suite draft 2020-12', () => {
  it('accepts exactly the valid instances of every case it compiles', { timeout: 120_000 }, () => {
    const files = readdirSync(suite!).filter((f) => f.endsWith('.json') && f !== 'format.json');
    const result = run(suite!, files);
    console.log(summary('draft2020-12', result));
    expect(result.mismatches).toEqual([]);
    // A floor, so the supported share cannot silently drop.
    expect(result.compiled / result.total).toBeGreaterThan(0.48);
  });

  it(
    'gives the same answers with flexible whitespace, instances pretty-printed',
    { timeout: 120_000 },
    () => {
      const files = readdirSync(suite!).filter((f) => f.endsWith('.json') && f !== 'format.json');
      const result = run(suite!, files, true);
      expect(result.mismatches).toEqual([]);
      expect(result.compiled).toBeGreaterThan(140);
    },
  );

  it('enforces the formats it knows as the optional format tests assert them', () => {
    const dir = join(suite!, 'optional/format');
    const result = run(
      dir,
      FORMATS.map((f) => `${f}.json`),
    );
    console.log(summary('optional/format', result));
    const unexpected = result.mismatches.filter(
      (m) => !(m.includes('valid but rejected') && STRICTER.some((re) => re.test(m))),
    );
    expect(unexpected).toEqual([]);
    expect(result.mismatches.length).toBeLessThanOrEqual(11);
  });
});
