import { writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall } from './cli-fixture.ts';

// `codecall grammar SCHEMA --format gbnf|lark|regex`: the grammar on stdout, what it cannot enforce on stderr,
// and --strict failing the command for it.

describe('codecall grammar', () => {
  let dir: string;
  let schema: string;
  let partial: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-grammar');
    schema = join(dir, 'schema.json');
    partial = join(dir, 'partial.json');
    const person = {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 8 },
        age: { type: 'integer', minimum: 0, maximum: 150 },
      },
      required: ['name'],
      additionalProperties: false,
    };
    await writeFile(schema, JSON.stringify(person));
    await writeFile(partial, JSON.stringify({ ...person, maxProperties: 1 }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints GBNF by default, Lark and a regex on request', async () => {
    const gbnf = await codecall({}, 'grammar', schema);
    expect(gbnf.code, gbnf.stderr).toBe(0);
    expect(gbnf.stdout).toMatch(/^root ::= "\{\\"name\\":\\"" char\{0,8\}/);
    expect(gbnf.stderr).toBe('');
    const lark = await codecall({}, 'grammar', schema, '--format', 'lark');
    expect(lark.stdout.split('\n')[0]).toBe('start: root');
    const regex = await codecall({}, 'grammar', schema, '--format', 'regex', '--whitespace', 'flexible');
    const re = new RegExp(regex.stdout.trim(), 'u');
    expect(re.test('{ "name": "ada",\n "age": 36 }')).toBe(true);
    expect(re.test('{"name":"ada","age":151}')).toBe(false);
  });

  it('lists what it cannot enforce on stderr, and --strict refuses the schema', async () => {
    const loose = await codecall({}, 'grammar', partial);
    expect(loose.code).toBe(0);
    expect(loose.stderr).toContain('not enforced: maxProperties at #');
    const strict = await codecall({}, 'grammar', partial, '--strict');
    expect(strict.code).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toContain('--strict refuses the schema');
  });

  it('answers a bad flag or a file that is not JSON with a stable code', async () => {
    const format = await codecall({}, 'grammar', schema, '--format', 'ebnf');
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('error INVALID_ARGUMENT: --format must be one of gbnf, lark, regex');
    await writeFile(join(dir, 'bad.json'), '{ not json');
    const bad = await codecall({}, 'grammar', join(dir, 'bad.json'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error GRAMMAR_INVALID_SCHEMA');
  });
});
