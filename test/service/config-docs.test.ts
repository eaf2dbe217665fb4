import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { envName, serviceConfigSchema } from '../../src/service/config.ts';
import { assertBuilt, codecall } from '../cli-fixture.ts';

// As with the error table: docs/config.md is the schema, key for key, and every flag it names is real.
const DOCS = readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8');

function rows(): Record<string, Record<string, string>> {
  const lines = DOCS.split('\n').filter((l) => l.startsWith('| `'));
  const cells = (line: string): string[] =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim().replace(/^`(.*)`$/, '$1'));
  return Object.fromEntries(
    lines
      .map(cells)
      .map(([key = '', env = '', flag = '', def = '', meaning = '']) => [key, { env, flag, def, meaning }]),
  );
}

describe('docs/config.md', () => {
  const documented = rows();
  const keys = Object.keys(serviceConfigSchema.shape) as (keyof typeof serviceConfigSchema.shape)[];
  let help = '';
  beforeAll(async () => {
    assertBuilt();
    help = (await codecall({}, 'serve', '--help')).stdout;
  });

  it('has one row per config key and none for a key the schema lacks', () => {
    expect(Object.keys(documented).sort()).toEqual([...keys].sort());
  });

  it.each(keys)('%s: its environment variable, default and flag are the real ones', (key) => {
    const row = documented[key];
    expect(row?.env).toBe(envName(key));
    expect(row?.def).toBe(JSON.stringify(serviceConfigSchema.shape[key].safeParse(undefined).data));
    expect(row?.meaning?.length ?? 0).toBeGreaterThan(10);
    expect(help).toContain(`${row?.flag ?? '?'} `);
  });

  it('a generated flag reaches the config like a hand-written one', async () => {
    const bad = await codecall({}, 'serve', '--port', '0', '--max-streams-per-key', '0');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/maxStreamsPerKey \(from --max-streams-per-key\)/);
  });
});
