import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall } from './cli-fixture.ts';

// Issue 19, the newcomer's first hour: what a first `npm start`, `codecall exec` or `... | head` meets, each
// through the built CLI as a child process.

describe('codecall in the first hour (the built CLI, as child processes)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-first-hour');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a program file of an unknown extension as a usage error naming the known ones', async () => {
    const file = join(dir, 'hello.rb');
    // Valid JavaScript: before, it ran as such.
    await writeFile(file, 'return 42;\n');
    const r = await codecall({}, 'exec', file);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      'error INVALID_ARGUMENT: cannot tell the language of hello.rb: a program file ends in .js, .mjs, .cjs, .ts, .mts, .cts or .py',
    );
    const asJs = join(dir, 'hello.mjs');
    await writeFile(asJs, 'return 42;\n');
    expect(await codecall({}, 'exec', asJs, '--json')).toMatchObject({ code: 0 });
  });
});
