// codecall used from one's own project: `npm pack` this repo, install the tarball into a temp project and run
// tools modules from there (ESM and CommonJS, .js/.mjs/.ts), as the README's "Use it in your project" says.
// Real processes; the tarball takes the built dist/ (like the other CLI tests, it does not build).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, lastJson, root } from './cli-fixture.ts';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const PROGRAM = 'const r = await tools.add({ a: 2, b: 3 });\nr * 10\n';

const ESM_TOOLS = `import { defineTool } from 'codecall';

export default [
  defineTool({
    name: 'add',
    description: 'Adds two numbers.',
    input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    execute: ({ a, b }) => a + b,
  }),
];
`;

const CJS_TOOLS = `const { defineTool } = require('codecall');

module.exports = [
  defineTool({
    name: 'add',
    description: 'Adds two numbers.',
    input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    execute: ({ a, b }) => a + b,
  }),
];
`;

const TS_TOOLS = `import { defineTool } from 'codecall';

export default [
  defineTool({
    name: 'add',
    description: 'Adds two numbers.',
    input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    execute: (args: Record<string, unknown>): number => (args.a as number) + (args.b as number),
  }),
];
`;

let dir: string;
let files: string[];
/** A CommonJS project with the tarball installed; its esm/ folder is an ES module project using that install. */
let cjsProject: string;
let esmProject: string;

async function write(folder: string, name: string, text: string): Promise<void> {
  await writeFile(join(folder, name), text);
}

/** `npx codecall exec --tools TOOLS program.js --json` in FOLDER: the installed codecall. */
async function execIn(folder: string, tools: string, cli: string[] = [npx, '--no', 'codecall']) {
  const [command = npx, ...args] = cli;
  try {
    const { stdout } = await run(command, [...args, 'exec', '--tools', tools, 'program.js', '--json'], {
      cwd: folder,
      timeout: 60_000,
    });
    return { code: 0, out: lastJson(stdout), stderr: '' };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, out: null, stderr: `${err.stderr ?? ''}${err.stdout ?? ''}` };
  }
}

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'codecall-package-'));
  // --ignore-scripts: the prepare script would rebuild dist/ under the other tests' feet.
  const packed = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: root,
    timeout: 120_000,
  });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  if (!info) throw new Error('npm pack printed no tarball');
  files = info.files.map((f) => f.path);

  cjsProject = join(dir, 'cjs-project');
  esmProject = join(cjsProject, 'esm');
  await mkdir(esmProject, { recursive: true });
  await write(cjsProject, 'package.json', '{ "name": "cjs-project", "private": true }\n');
  await write(esmProject, 'package.json', '{ "name": "esm-project", "private": true, "type": "module" }\n');
  // One install shared by both projects (node resolves esm/'s imports from the parent's node_modules).
  // --ignore-scripts keeps it quick: better-sqlite3's native build is not needed by `codecall exec`.
  await run(
    npm,
    ['install', join(dir, info.filename), '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    { cwd: cjsProject, timeout: 170_000 },
  );
  for (const folder of [cjsProject, esmProject]) await write(folder, 'program.js', PROGRAM);
}, 180_000);

describe('npm pack', () => {
  it('packs the built package: dist/, the bin, the types, the license, no sources or tests', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'bin/codecall.js',
        'dist/index.js',
        'dist/index.d.ts',
      ]),
    );
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || /\.test\./.test(f))).toEqual(
      [],
    );
  });
});

describe('codecall installed from the tarball into a project', () => {
  it('a CommonJS project: require("codecall") and module.exports = [defineTool(...)]', async () => {
    await write(cjsProject, 'tools.js', CJS_TOOLS);
    const r = await execIn(cjsProject, './tools.js');
    expect(r.stderr).toBe('');
    expect(r.out).toMatchObject({ status: 'succeeded', result: 50, resources: { tool_calls: 1 } });
    const required = await run(
      process.execPath,
      ['-e', 'console.log(typeof require("codecall").defineTool)'],
      {
        cwd: cjsProject,
      },
    );
    expect(required.stdout.trim()).toBe('function');
  });

  it('a CommonJS project: a .ts tools module with export default', async () => {
    await write(cjsProject, 'tools.ts', TS_TOOLS);
    const r = await execIn(cjsProject, './tools.ts');
    expect(r.stderr).toBe('');
    expect(r.out).toMatchObject({ status: 'succeeded', result: 50 });
  });

  it('an ES module project: tools.js, tools.mjs and tools.ts', async () => {
    await write(esmProject, 'tools.js', ESM_TOOLS);
    await write(esmProject, 'tools.mjs', ESM_TOOLS);
    await write(esmProject, 'tools.ts', TS_TOOLS);
    for (const tools of ['./tools.js', './tools.mjs', './tools.ts']) {
      const r = await execIn(esmProject, tools);
      expect({ tools, stderr: r.stderr }).toEqual({ tools, stderr: '' });
      expect(r.out).toMatchObject({ status: 'succeeded', result: 50 });
    }
  });

  it("another codecall (this clone's) runs the project's tools: definitions from another copy of codecall are accepted", async () => {
    const r = await execIn(esmProject, './tools.mjs', [process.execPath, bin]);
    expect(r.stderr).toBe('');
    expect(r.out).toMatchObject({ status: 'succeeded', result: 50 });
  });
});

describe('a tools module in no project', () => {
  it("imports or requires 'codecall' and gets the codecall that loads it", async () => {
    const loose = join(dir, 'loose');
    await mkdir(loose);
    await write(loose, 'program.js', PROGRAM);
    await write(loose, 'tools.mjs', ESM_TOOLS);
    await write(loose, 'tools.cjs', CJS_TOOLS);
    for (const tools of ['./tools.mjs', './tools.cjs']) {
      const r = await execIn(loose, tools, [process.execPath, bin]);
      expect({ tools, stderr: r.stderr }).toEqual({ tools, stderr: '' });
      expect(r.out).toMatchObject({ status: 'succeeded', result: 50 });
    }
  });
});
